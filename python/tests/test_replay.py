"""atif_replay: record, replay, and each way a replay is not exact, through inner pytest runs."""

import json
import os
import socket
import textwrap

import pytest

# Imported once here, the SDK stays loaded across the inner in-process sessions (pytester restores
# sys.modules to what it was before each), which saves seconds per inner run.
if os.environ.get("ATIF_E2E_REQUIRED") == "1":
    import openai  # noqa: F401 (on CI a missing SDK fails instead of skipping)
else:
    pytest.importorskip("openai", reason="skipped: the openai SDK is missing; run `cargo xtask e2e-setup`")

# An inner agent on the OpenAI SDK. AGENT_MODE picks a behaviour change against the recording:
# `more` asks the model once more, `fewer` stops after the first reply, `drift` changes the
# prompt, `crash` raises after the first model call.
AGENT = textwrap.dedent(
    '''
    import os

    from openai import OpenAI

    SHELL = {"type": "function", "function": {"name": "shell", "description": "run a command",
             "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                            "required": ["command"]}}}

    def run(prompt="What is 6 * 7?"):
        mode = os.environ.get("AGENT_MODE", "")
        if mode == "drift":
            prompt = "What is six times seven?"
        client = OpenAI(max_retries=0)
        messages = [{"role": "user", "content": prompt}]
        asked_again = False
        while True:
            reply = client.chat.completions.create(model="fake-model", messages=messages, tools=[SHELL])
            if mode == "crash":
                raise RuntimeError("the agent crashed halfway")
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if mode == "fewer":
                return "gave up early"
            if message.tool_calls:
                for call in message.tool_calls:
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": "42"})
                continue
            if mode == "more" and not asked_again:
                asked_again = True
                messages.append({"role": "user", "content": "Check that again."})
                continue
            return message.content
    '''
)

TESTS = textwrap.dedent(
    '''
    import agent

    def test_answer(atif_replay, atif_golden):
        assert "42" in agent.run()
        atif_golden()
    '''
)


@pytest.fixture
def recorded(pytester: pytest.Pytester, fake_provider_url: str) -> pytest.Pytester:
    """A project whose one test was recorded against the fake provider, golden included."""
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)
    pytester.syspathinsert()
    result = pytester.runpytest("--atif-record", "--atif-update", "--atif-upstream", fake_provider_url)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*recorded tests/scripts/test_agent__test_answer.json",
            "*created golden tests/golden/test_agent__test_answer.json",
        ]
    )
    return pytester


def test_a_recorded_test_replays_green_offline_and_matches_its_golden(recorded: pytest.Pytester):
    script = recorded.path / "tests" / "scripts" / "test_agent__test_answer.json"
    assert script.is_file()
    golden = json.loads((recorded.path / "tests" / "golden" / "test_agent__test_answer.json").read_text())
    calls = [call["function_name"] for step in golden["steps"] for call in step.get("tool_calls", [])]
    assert calls == ["shell"]
    recorded.runpytest().assert_outcomes(passed=1)


def test_the_servers_control_endpoints_answer_the_test_with_its_token_and_nobody_without(recorded, fake_provider_url):
    recorded.makepyfile(
        test_control=textwrap.dedent(
            '''
            import json
            import os
            import urllib.error
            import urllib.request

            import agent

            def test_control(atif_replay):
                assert "42" in agent.run()
                url = os.environ["ATIF_PROXY_URL"] + "/_atif/verdict"
                token = os.environ["ATIF_PROXY_TOKEN"]
                try:
                    urllib.request.urlopen(url, timeout=10)
                    raise AssertionError("answered without the token")
                except urllib.error.HTTPError as err:
                    assert err.code == 401
                request = urllib.request.Request(url, headers={"x-atif-token": token})
                with urllib.request.urlopen(request, timeout=10) as reply:
                    verdict = json.loads(reply.read())
                assert verdict["operation"] == "record"
                assert verdict["requests_refused"] == 1
            '''
        )
    )
    result = recorded.runpytest("test_control.py", "--atif-record", "--atif-upstream", fake_provider_url)
    result.assert_outcomes(passed=1)


def test_a_re_recorded_behaviour_change_fails_the_golden_with_the_new_tool_call(recorded, monkeypatch, fake_provider_url):
    monkeypatch.setenv("AGENT_MODE", "more")
    rerecorded = recorded.runpytest("--atif-record", "--atif-upstream", fake_provider_url)
    rerecorded.assert_outcomes(failed=1)
    rerecorded.stdout.fnmatch_lines(
        [
            "*agent behaviour changed*",
            "*llm_calls: 2 -> 4",
            "*functions: step * added shell (1 -> 2 calls)",
            "*if this change is intended: pytest --atif-update test_agent.py::test_answer",
        ]
    )


def test_replays_and_checks_of_a_session_run_in_one_atif_process(recorded, monkeypatch):
    from atif_pytest import find_atif

    log = recorded.path / "atif-calls.log"
    wrapper = recorded.path / "atif-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {find_atif()} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("ATIF_BIN", str(wrapper))
    # A second test replays the same script against a copy of the same golden.
    again = TESTS.replace("def test_answer", '@pytest.mark.atif_script("tests/scripts/test_agent__test_answer.json")\ndef test_again')
    recorded.makepyfile(test_again="import pytest\n" + again)
    golden = recorded.path / "tests" / "golden"
    (golden / "test_again__test_again.json").write_text((golden / "test_agent__test_answer.json").read_text())
    recorded.runpytest().assert_outcomes(passed=2)
    assert log.read_text().splitlines() == ["harness"]


def test_one_more_model_call_fails_with_the_verdict_once_and_without_the_sdks_frames(recorded, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "more")
    result = recorded.runpytest()
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*_ test_answer _*",
            "the replay of tests/scripts/test_agent__test_answer.json was not exact*",
            "test_agent.py:*: in test_answer",
            "agent.py:*: in run",
            "*client.chat.completions.create(*",
            "E   openai.BadRequestError raised in openai (* frame(s) hidden; pytest --fulltrace shows them)*",
            "atif replay: replay not exact:",
            "- the agent made request #3 to /v1/chat/completions, but the script recorded 2.*",
            "if this change is intended, re-record the script: pytest --atif-record test_agent.py::test_answer",
            "*short test summary info*",
            "FAILED test_agent.py::test_answer*",
        ]
    )
    assert text.count("the agent made request #3") == 1, text
    assert "_base_client.py" not in text and "atif_pytest/" not in text, text
    report = text[text.index("_ test_answer _"):text.index("short test summary info")]
    assert len(report.splitlines()) <= 12, report
    # The frames are hidden from the report, not lost: --fulltrace shows them all.
    full = recorded.runpytest("--fulltrace")
    full.assert_outcomes(failed=1)
    assert "_base_client.py" in full.stdout.str()


def test_fewer_model_calls_fail_naming_the_unused_exchanges(recorded, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "fewer")
    result = recorded.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the replay of *test_agent__test_answer.json was not exact*",
            "*1 of the 2 recorded exchanges were never requested: #2 POST /v1/chat/completions*",
            "*re-record the script: pytest --atif-record test_agent.py::test_answer",
        ]
    )


def test_a_changed_prompt_fails_with_the_drift_diff(recorded, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "drift")
    result = recorded.runpytest()
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "the replay of tests/scripts/test_agent__test_answer.json was not exact*",
            "E   openai.BadRequestError raised in openai*",
            "- request #1 to /v1/chat/completions matches no unused recorded exchange*",
            "--- exchange #1 (recorded)",
            "+++ request #1 (now)",
        ]
    )
    # The request's diff is shown once: the SDK's copy of the server's message is left out.
    assert text.count('-        "content": "What is 6 * 7?",') == 1, text
    assert text.count('+        "content": "What is six times seven?",') == 1, text
    assert "_base_client.py" not in text, text


def test_drift_warn_serves_the_nearest_exchange_and_reports_the_difference(recorded, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "drift")
    result = recorded.runpytest("--atif-drift", "warn")
    # The replay served the drifted requests anyway; the golden holds the old prompt, so the
    # golden is what fails, and the report carries the server's warnings.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*agent behaviour changed*", "*atif replay warnings*"])
    assert "What is six times seven?" in result.stdout.str()


def test_a_crash_halfway_still_stops_the_server_and_reports_its_verdict(recorded, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "crash")
    result = recorded.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*RuntimeError: the agent crashed halfway",
            "*atif replay verdict*",
            "*never requested*",
        ]
    )


def test_a_golden_checked_before_the_first_model_call_says_no_run_was_captured_yet(recorded):
    recorded.makepyfile(
        test_agent=textwrap.dedent(
            """
            import agent

            def test_answer(atif_replay, atif_golden):
                atif_golden()
                agent.run()
            """
        )
    )
    result = recorded.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*atif check could not compare with the golden tests/golden/test_agent__test_answer.json (exit 2):",
            "*error: no trajectory could be captured from the test's model traffic: *",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_missing_script_fails_naming_it_and_how_to_record(pytester: pytest.Pytester):
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)
    pytester.syspathinsert()
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*the replay script tests/scripts/test_agent__test_answer.json does not exist: "
            "record it with `pytest --atif-record`*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_recording_is_refused_on_ci(pytester: pytest.Pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)
    result = pytester.runpytest("--atif-record")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--atif-record is refused on CI (CI=true)*"])
    assert not (pytester.path / "tests" / "scripts").exists()


def test_a_port_in_use_fails_naming_the_script_and_the_address(recorded: pytest.Pytester):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        result = recorded.runpytest("--atif-listen", address)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*atif serve could not start for tests/scripts/test_agent__test_answer.json "
            "(exited with status 2):",
            f"*{address}*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "During handling" not in result.stdout.str()


def test_parametrised_tests_replay_under_xdist_each_with_its_own_server(pytester, fake_provider_url):
    pytester.makepyfile(
        agent=AGENT,
        test_cases=textwrap.dedent(
            '''
            import pytest

            import agent

            @pytest.mark.parametrize("case", ["a", "b", "c", "d"])
            def test_case(atif_replay, atif_golden, case):
                assert "42" in agent.run(f"What is 6 * 7? (case {case})")
                atif_golden()
            '''
        ),
    )
    pytester.syspathinsert()
    recorded = pytester.runpytest_subprocess(
        "--atif-record", "--atif-update", "--atif-upstream", fake_provider_url, "-n", "2"
    )
    recorded.assert_outcomes(passed=4)
    scripts = sorted(path.name for path in (pytester.path / "tests" / "scripts").iterdir())
    assert scripts == [f"test_cases__test_case__{case}.json" for case in "abcd"]
    goldens = sorted(path.name for path in (pytester.path / "tests" / "golden").iterdir())
    assert goldens == scripts
    # The workers' records reach the controller's summary.
    recorded.stdout.fnmatch_lines_random(
        [f"recorded tests/scripts/test_cases__test_case__{case}.json" for case in "abcd"]
        + [f"created golden tests/golden/test_cases__test_case__{case}.json" for case in "abcd"]
    )
    replayed = pytester.runpytest_subprocess("-n", "4")
    replayed.assert_outcomes(passed=4)
