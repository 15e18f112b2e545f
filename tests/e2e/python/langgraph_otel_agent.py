"""A small LangGraph agent with a local shell tool, traced by OpenInference's LangChain
instrumentation, run against the OpenAI Chat Completions API at `base_url` (the workspace's
fake provider) through langchain-openai.

Usage: python langgraph_otel_agent.py BASE_URL TRACE_FILE

Its spans are kept in memory by the OpenTelemetry SDK and written to TRACE_FILE as one OTLP
protobuf `ExportTraceServiceRequest`, what an OTLP exporter would send, for `atif import`.
"""

import subprocess
import sys

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@tool
def bash(command: str) -> str:
    """Runs a shell command and returns what it printed."""
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def main() -> None:
    base_url, trace_file = sys.argv[1], sys.argv[2]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    model = ChatOpenAI(model="fake-model", base_url=f"{base_url}/v1", api_key="atif-e2e")
    agent = create_react_agent(
        model, [bash], prompt="You run shell commands.", name="shell_agent"
    )
    state = agent.invoke({"messages": [("user", "Say hello using the shell.")]})
    print(state["messages"][-1].content)
    provider.force_flush()
    with open(trace_file, "wb") as out:
        out.write(encode_spans(exporter.get_finished_spans()).SerializeToString())


if __name__ == "__main__":
    main()
