"""A small pydantic-ai agent with a local shell tool, instrumented with pydantic-ai's built-in
OpenTelemetry support, run against the model at `base_url` (the workspace's fake provider).

Usage: python pydantic_otel_agent.py BASE_URL TRACE_FILE [--stream]

Its spans are kept in memory by the OpenTelemetry SDK and written to TRACE_FILE as one OTLP
protobuf `ExportTraceServiceRequest`, what an OTLP exporter would send, for `atif import`.
"""

import subprocess
import sys

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider


def main() -> None:
    base_url, trace_file = sys.argv[1], sys.argv[2]
    stream = "--stream" in sys.argv[3:]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=f"{base_url}/v1", api_key="atif-e2e"))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    agent = Agent(model, name="shell_agent", instructions="You run shell commands.")

    @agent.tool_plain
    def bash(command: str) -> str:
        """Runs a shell command and returns what it printed."""
        done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    prompt = "Say hello using the shell."
    if stream:
        async def run() -> str:
            async with agent.run_stream(prompt) as result:
                return await result.get_output()

        import asyncio

        output = asyncio.run(run())
    else:
        output = agent.run_sync(prompt).output
    print(output)
    provider.force_flush()
    with open(trace_file, "wb") as out:
        out.write(encode_spans(exporter.get_finished_spans()).SerializeToString())


if __name__ == "__main__":
    main()
