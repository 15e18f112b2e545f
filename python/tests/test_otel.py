"""The `atif_otel` fixture: a test's OpenTelemetry spans, collected in memory by the SDK's
in-memory exporter, imported and checked against a golden, with no receiver and no trace file.

The inner tests emit the spans an instrumented agent emits (GenAI semantic conventions: an
agent span, model calls, a tool execution) through the real OpenTelemetry SDK.
"""

import importlib.util
import json
import os

import pytest


@pytest.fixture(autouse=True)
def _opentelemetry_sdk() -> None:
    """The SDK is one of the end-to-end packages: skipped without it, unless required (CI)."""
    if importlib.util.find_spec("opentelemetry.sdk") and importlib.util.find_spec(
        "opentelemetry.exporter.otlp.proto.common"
    ):
        # Imported once by this outer session, so that pytester's inner sessions (which drop
        # the modules they import) all share one `SpanKind` with the encoder.
        importlib.import_module("opentelemetry.sdk.trace.export.in_memory_span_exporter")
        importlib.import_module("opentelemetry.exporter.otlp.proto.common.trace_encoder")
        return
    message = "skipped: the OpenTelemetry SDK is not installed in this venv; run `cargo xtask e2e-setup`"
    if os.environ.get("ATIF_E2E_REQUIRED") == "1":
        pytest.fail(message.replace("skipped: ", ""), pytrace=False)
    pytest.skip(message)

AGENT = '''
import json

def run_agent(tracer_provider, command="ls", fail=False):
    tracer = tracer_provider.get_tracer("demo-agent", "1.0")
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "bash",
            "arguments": json.dumps({"command": command})}]}
    user = {"role": "user", "parts": [{"type": "text", "content": "List the files."}]}
    with tracer.start_as_current_span("invoke_agent demo", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "demo"}):
        with tracer.start_as_current_span("chat fake-model", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "fake-model",
                "gen_ai.input.messages": json.dumps([user]),
                "gen_ai.output.messages": json.dumps([call]),
                "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 3}):
            pass
        with tracer.start_as_current_span("execute_tool bash", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps({"command": command})}) as span:
            if fail:
                span.record_exception(PermissionError("denied"))
                span.set_status(__import__("opentelemetry.trace", fromlist=["Status"]).Status(
                    __import__("opentelemetry.trace", fromlist=["StatusCode"]).StatusCode.ERROR, "denied"))
            else:
                span.set_attribute("gen_ai.tool.call.result", "a.txt")
        result = {"role": "user", "parts": [{"type": "tool_call_response", "id": "call_1", "result": "a.txt"}]}
        with tracer.start_as_current_span("chat fake-model", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "fake-model",
                "gen_ai.input.messages": json.dumps([user, call, result]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": "There is a.txt."}]}]),
                "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 4}):
            pass
'''

TESTS = '''
from agent import run_agent
from settings import COMMAND, FAIL

def test_agent(atif_otel, atif_golden):
    run_agent(atif_otel.tracer_provider, command=COMMAND, fail=FAIL)
    trajectory = atif_otel.trajectory()
    assert trajectory["agent"]["extra"]["log_format"] == "otel"
    atif_golden()
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose one test wrote its golden from its spans."""
    pytester.makepyfile(agent=AGENT, test_agent=TESTS, settings="COMMAND = 'ls'\nFAIL = False\n")
    result = pytester.runpytest("--atif-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*created golden tests/golden/test_agent__test_agent.json"])
    return pytester


def test_spans_collected_in_memory_become_a_golden_and_the_next_run_checks_equal(project):
    golden = json.loads((project.path / "tests" / "golden" / "test_agent__test_agent.json").read_text())
    assert golden["agent"]["name"] == "demo"
    calls = [call["function_name"] for step in golden["steps"] for call in step.get("tool_calls", [])]
    assert calls == ["bash"]
    assert golden["extra"]["capture"]["content"] == "full"
    # New trace and span ids and times: the `otel` preset masks them.
    project.runpytest().assert_outcomes(passed=1)
    assert not list(project.path.rglob("*.new")), "a green check leaves no pending file"


def test_a_changed_tool_call_fails_naming_the_step(project):
    project.makepyfile(settings="COMMAND = 'rm -rf /'\nFAIL = False\n")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*step 2 (agent) changed: arguments of bash changed*"])


def test_a_tool_error_fails_and_the_diff_shows_it(project):
    project.makepyfile(settings="COMMAND = 'ls'\nFAIL = True\n")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*observation changed*", '*"kind": "PermissionError"*'])


def test_a_test_without_spans_fails_saying_how_to_instrument(pytester: pytest.Pytester):
    pytester.makepyfile(test_empty="def test_empty(atif_otel, atif_golden):\n    atif_golden()\n")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*atif_otel collected no span: instrument the framework with atif_otel.tracer_provider*"])
