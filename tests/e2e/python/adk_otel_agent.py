"""A small Google ADK agent with a local shell tool, traced by ADK's own OpenTelemetry
instrumentation, run against the Gemini API at `base_url` (the workspace's fake provider).

Usage: python adk_otel_agent.py BASE_URL TRACE_FILE [--content]

ADK records no message content by default, as the GenAI conventions ask; `--content` turns it
on for this run (`TelemetryConfig(capture_message_content=SPAN_ONLY)`, what the environment
variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY` does for a whole
process). Its spans are kept in memory by the OpenTelemetry SDK and written to TRACE_FILE as
one OTLP protobuf `ExportTraceServiceRequest`, what an OTLP exporter would send, for
`atif import`.
"""

import asyncio
import subprocess
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

# ADK takes its tracer from the global provider, so it is set before ADK is imported.
EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(PROVIDER)

from google.adk.agents import Agent, RunConfig  # noqa: E402
from google.adk.models import Gemini  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.telemetry import ContentCapturingMode, TelemetryConfig  # noqa: E402
from google.genai import types  # noqa: E402


def bash(command: str) -> str:
    """Runs a shell command and returns what it printed."""
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


async def run(base_url: str, content: bool) -> str:
    model = Gemini(model="fake-model", base_url=base_url, client_kwargs={"api_key": "atif-e2e"})
    agent = Agent(
        name="shell_agent",
        model=model,
        instruction="You run shell commands.",
        tools=[bash],
    )
    runner = InMemoryRunner(agent=agent, app_name="atif_e2e")
    session = await runner.session_service.create_session(app_name="atif_e2e", user_id="user")
    mode = ContentCapturingMode.SPAN_ONLY if content else ContentCapturingMode.NO_CONTENT
    config = RunConfig(telemetry=TelemetryConfig(capture_message_content=mode))
    message = types.Content(role="user", parts=[types.Part(text="Say hello using the shell.")])
    answer = ""
    async for event in runner.run_async(
        user_id="user", session_id=session.id, new_message=message, run_config=config
    ):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(part.text or "" for part in event.content.parts)
    return answer


def main() -> None:
    base_url, trace_file = sys.argv[1], sys.argv[2]
    content = "--content" in sys.argv[3:]
    print(asyncio.run(run(base_url, content)))
    PROVIDER.force_flush()
    with open(trace_file, "wb") as out:
        out.write(encode_spans(EXPORTER.get_finished_spans()).SerializeToString())


if __name__ == "__main__":
    main()
