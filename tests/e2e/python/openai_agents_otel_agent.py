"""Three small OpenAI Agents SDK agents, a triage agent that hands off to a shell agent with a
local shell tool and a helper agent it calls as a tool (a subagent), instrumented with `openinference-instrumentation-openai-agents`, run against
the model at `base_url` (the workspace's fake provider, through its Responses route).

Usage: python openai_agents_otel_agent.py BASE_URL TRACE_FILE [--stream]

Which calls the model makes (the handoff, the shell command, the helper) is the fake provider's
script. Its spans are kept in memory by the OpenTelemetry SDK and written to TRACE_FILE as one
OTLP protobuf `ExportTraceServiceRequest`, what an OTLP exporter would send, for `atif import`.
"""

import asyncio
import subprocess
import sys

from agents import Agent, Runner, function_tool, set_default_openai_client
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@function_tool
def bash(command: str) -> str:
    """Runs a shell command and returns what it printed.

    Args:
        command: The command line, run by `sh -c`.
    """
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


async def run(prompt: str, stream: bool) -> str:
    helper = Agent(name="helper_agent", instructions="You help.", model="fake-model")
    shell_agent = Agent(
        name="shell_agent",
        instructions="You run shell commands.",
        model="fake-model",
        tools=[bash, helper.as_tool(tool_name="ask_helper", tool_description="Asks the helper.")],
    )
    triage = Agent(
        name="triage_agent",
        instructions="Hand shell work to the shell agent.",
        model="fake-model",
        handoffs=[shell_agent],
    )
    if not stream:
        return str((await Runner.run(triage, prompt)).final_output)
    result = Runner.run_streamed(triage, prompt)
    async for _ in result.stream_events():
        pass
    return str(result.final_output)


def main() -> None:
    base_url, trace_file = sys.argv[1], sys.argv[2]
    stream = "--stream" in sys.argv[3:]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # The instrumentor replaces the SDK's own trace processor (which would upload to OpenAI).
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    set_default_openai_client(
        AsyncOpenAI(base_url=f"{base_url}/v1", api_key="atif-e2e"), use_for_tracing=False
    )
    print(asyncio.run(run("Say hello using the shell.", stream)))
    provider.force_flush()
    with open(trace_file, "wb") as out:
        out.write(encode_spans(exporter.get_finished_spans()).SerializeToString())


if __name__ == "__main__":
    main()
