"""The plugin against a real model (issue 29): a small agent on the `openai` SDK, with forced tool
calls and retries, recorded from Gemma 3 270M on llama-cpp-python (the `real_model` fixture) and
replayed offline with the server stopped, its golden matched, streamed and not."""

import json
import textwrap
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parents[2] / "tests" / "e2e" / "python" / "weather_agent.py"

TESTS = textwrap.dedent(
    """
    import weather_agent

    def test_weather(atif_replay, atif_golden):
        assert weather_agent.run(stream=STREAM) == 0
        atif_golden()
    """
)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_agent_recorded_from_the_real_model_replays_offline_and_matches_its_golden(pytester, real_model, stream):
    pytester.makepyfile(weather_agent=AGENT.read_text(), test_agent=TESTS.replace("STREAM", str(stream)))
    pytester.syspathinsert()
    recorded = pytester.runpytest("--atif-record", "--atif-update", "--atif-upstream", real_model.url)
    recorded.assert_outcomes(passed=1)
    real_model.stop()
    golden = json.loads((pytester.path / "tests" / "golden" / "test_agent__test_weather.json").read_text())
    calls = [call["function_name"] for step in golden["steps"] for call in step.get("tool_calls", [])]
    assert calls[0] == "get_weather" and "add" in calls, calls
    assert set(calls) == {"get_weather", "add"}, calls
    replayed = pytester.runpytest()
    replayed.assert_outcomes(passed=1)
