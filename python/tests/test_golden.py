"""atif_golden: missing goldens, updates, behaviour changes and names, through inner pytest runs."""

import json
import textwrap

import pytest

# An inner test module: `run_agent(n)` stands for an agent whose trajectory calls `lookup` n times.
AGENT_TESTS = textwrap.dedent(
    '''
    import os
    import pathlib

    def trajectory(n_calls):
        steps = [{"step_id": 1, "source": "user", "message": "Paris or Oslo: which is warmer?"}]
        for i in range(n_calls):
            call = f"call_{os.getpid()}_{i}"
            steps.append({
                "step_id": len(steps) + 1,
                "source": "agent",
                "model_name": "gpt-4.1-mini",
                "message": "",
                "tool_calls": [{"tool_call_id": call, "function_name": "lookup", "arguments": {"city": f"c{i}"}}],
                "observation": {"results": [{"source_call_id": call, "content": "18 C"}]},
                "metrics": {"prompt_tokens": 100, "completion_tokens": 10},
            })
        steps.append({"step_id": len(steps) + 1, "source": "agent", "model_name": "gpt-4.1-mini", "message": "Paris"})
        return {
            "schema_version": "ATIF-v1.8",
            "session_id": f"session-{os.getpid()}",
            "agent": {"name": "weather", "version": "1"},
            "steps": steps,
        }

    # How many tool calls the agent makes: 1, or what the test wrote into calls.txt.
    CALLS_FILE = pathlib.Path("calls.txt")
    N_CALLS = int(CALLS_FILE.read_text()) if CALLS_FILE.exists() else 1

    def test_weather(atif_golden):
        atif_golden(trajectory(N_CALLS))
    '''
)


def golden_file(pytester: pytest.Pytester, name: str = "test_agent__test_weather.json"):
    return pytester.path / "tests" / "golden" / name


def test_a_missing_golden_fails_naming_the_file_and_the_update_command(pytester: pytest.Pytester):
    pytester.makepyfile(test_agent=AGENT_TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*golden file tests/golden/test_agent__test_weather.json does not exist; "
            "record it with: pytest --atif-update test_agent.py::test_weather",
            "*pending: the actual run was written to tests/golden/test_agent__test_weather.json.new",
        ]
    )
    assert not golden_file(pytester).exists()
    assert "Traceback" not in result.stdout.str()


def test_the_project_file_atif_toml_applies_to_the_plugins_goldens(pytester: pytest.Pytester):
    # The plugin runs `atif check` in the project, which reads atif.toml: no keyword needed.
    pytester.makepyfile(test_agent=AGENT_TESTS)
    (pytester.path / "atif.toml").write_text(
        '[[golden]]\nglob = "tests/golden/*.json"\nmask = ["Paris=CITY"]\n'
    )
    pytester.runpytest("--atif-update").assert_outcomes(passed=1)
    text = golden_file(pytester).read_text()
    assert '"CITY"' in text and "Paris" not in text
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_missing_golden_on_ci_leaves_no_pending_file(pytester: pytest.Pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    pytester.makepyfile(test_agent=AGENT_TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    assert not (pytester.path / "tests" / "golden").exists()
    assert "pending:" not in result.stdout.str()


def test_atif_update_writes_the_golden_and_the_next_run_passes(pytester: pytest.Pytester):
    pytester.makepyfile(test_agent=AGENT_TESTS)
    written = pytester.runpytest("--atif-update")
    written.assert_outcomes(passed=1)
    written.stdout.fnmatch_lines(["*created golden tests/golden/test_agent__test_weather.json"])
    golden = json.loads(golden_file(pytester).read_text())
    assert [step["source"] for step in golden["steps"]] == ["user", "agent", "agent"]
    # Volatile ids were normalised away: a second process, with other ids, still matches.
    pytester.runpytest().assert_outcomes(passed=1)


def test_atif_golden_update_in_the_environment_writes_like_the_flag(pytester, monkeypatch):
    monkeypatch.setenv("ATIF_GOLDEN", "update")
    pytester.makepyfile(test_agent=AGENT_TESTS)
    pytester.runpytest().assert_outcomes(passed=1)
    assert golden_file(pytester).is_file()


def test_one_more_tool_call_fails_with_shape_deltas_explanation_and_diff(pytester):
    pytester.makepyfile(test_agent=AGENT_TESTS)
    pytester.runpytest("--atif-update").assert_outcomes(passed=1)
    (pytester.path / "calls.txt").write_text("2")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*agent behaviour changed (*difference(s)):",
            "*  step_count: 3 -> 4",
            "*  functions: step 3 added lookup (1 -> 2 calls)",
            "*what moved, step by step:",
            "*  step 3 (agent) inserted: calls lookup",
            "*unified diff (golden -> actual), * changed place*:",
            "*golden: tests/golden/test_agent__test_weather.json",
            "*pending: the actual run was written to tests/golden/test_agent__test_weather.json.new",
            "*if this change is intended: pytest --atif-update test_agent.py::test_weather",
            "*review pending goldens with: atif golden review --dir tests/golden",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*1 golden(s) left a pending .json.new file for review: atif golden review --dir tests/golden"]
    )
    assert "Traceback" not in result.stdout.str()
    assert golden_file(pytester, "test_agent__test_weather.json.new").is_file()


def test_junitxml_holds_the_golden_its_verdict_and_each_shape_delta_as_properties(pytester):
    pytester.makepyfile(test_agent=AGENT_TESTS)
    pytester.runpytest("--atif-update").assert_outcomes(passed=1)
    pytester.runpytest("--junitxml=pass.xml").assert_outcomes(passed=1)
    passed = (pytester.path / "pass.xml").read_text()
    assert '<property name="atif.golden" value="tests/golden/test_agent__test_weather.json" />' in passed
    assert '<property name="atif.verdict" value="matched" />' in passed
    assert "atif.delta." not in passed
    (pytester.path / "calls.txt").write_text("2")
    pytester.runpytest("--junitxml=fail.xml").assert_outcomes(failed=1)
    failed = (pytester.path / "fail.xml").read_text()
    assert '<property name="atif.verdict" value="behaviour-changed" />' in failed
    assert '<property name="atif.delta.step_count" value="step_count: 3 -&gt; 4" />' in failed
    assert '<property name="atif.delta.functions" value="functions: step 3 added lookup (1 -&gt; 2 calls)" />' in failed


def test_the_pending_goldens_of_xdist_workers_reach_the_summary(pytester):
    pytester.makepyfile(test_agent=AGENT_TESTS + AGENT_TESTS.replace("def test_weather", "def test_weather_again"))
    pytester.runpytest("--atif-update").assert_outcomes(passed=2)
    (pytester.path / "calls.txt").write_text("2")
    result = pytester.runpytest_subprocess("-n", "2")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*2 golden(s) left a pending .json.new file for review: atif golden review --dir tests/golden"]
    )


def test_a_session_runs_one_atif_process_for_all_its_checks(pytester, monkeypatch):
    """The checks run in the session's `atif harness`, not in an `atif check` process each."""
    from atif_pytest import find_atif

    log = pytester.path / "atif-calls.log"
    wrapper = pytester.path / "atif-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {find_atif()} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("ATIF_BIN", str(wrapper))
    pytester.makepyfile(
        test_three=AGENT_TESTS.replace("def test_weather", "def unused")
        + textwrap.dedent(
            '''
            import pytest

            @pytest.mark.parametrize("n", [1, 2, 3])
            def test_case(atif_golden, n):
                atif_golden(trajectory(n))
            '''
        )
    )
    pytester.runpytest("--atif-update").assert_outcomes(passed=3)
    pytester.runpytest().assert_outcomes(passed=3)
    assert log.read_text().splitlines() == ["harness", "harness"]


def test_an_unknown_atif_golden_value_is_a_usage_error(pytester, monkeypatch):
    monkeypatch.setenv("ATIF_GOLDEN", "updte")
    pytester.makepyfile(test_agent=AGENT_TESTS)
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown ATIF_GOLDEN value `updte`: expected one of auto, check, review, update*"])


def test_parametrised_cases_and_named_goldens_get_their_own_stable_files(pytester):
    pytester.makepyfile(
        test_cases=AGENT_TESTS
        + textwrap.dedent(
            '''
            import pytest

            @pytest.mark.parametrize("n", [1, 2], ids=["one call", "two calls"])
            def test_case(atif_golden, n):
                atif_golden(trajectory(n))
                atif_golden(trajectory(n + 1), name="plus one")
            '''
        )
    )
    pytester.runpytest("--atif-update").assert_outcomes(passed=3)
    names = sorted(path.name for path in (pytester.path / "tests" / "golden").iterdir())
    assert names == [
        "test_cases__test_case__one_call.json",
        "test_cases__test_case__one_call__plus_one.json",
        "test_cases__test_case__two_calls.json",
        "test_cases__test_case__two_calls__plus_one.json",
        "test_cases__test_weather.json",
    ]
    pytester.runpytest().assert_outcomes(passed=3)


def test_two_checks_of_one_golden_in_a_test_fail_naming_it(pytester):
    pytester.makepyfile(
        test_twice=AGENT_TESTS.replace("def test_weather", "def unused")
        + textwrap.dedent(
            '''
            def test_twice(atif_golden):
                atif_golden(trajectory(1))
                atif_golden(trajectory(1))
            '''
        )
    )
    result = pytester.runpytest("--atif-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*the golden tests/golden/test_twice__test_twice.json is already checked by "
            "test_twice.py::test_twice; give this check its own name: atif_golden(..., name=*",
        ]
    )


def test_a_trajectory_path_is_compared_and_a_missing_one_is_named(pytester):
    pytester.makepyfile(
        test_paths=AGENT_TESTS.replace("def test_weather", "def unused")
        + textwrap.dedent(
            '''
            import json

            def test_from_file(atif_golden, tmp_path):
                path = tmp_path / "run.json"
                path.write_text(json.dumps(trajectory(1)))
                atif_golden(path)

            def test_missing_file(atif_golden):
                atif_golden("runs/nowhere.json")

            def test_wrong_type(atif_golden):
                atif_golden([1, 2])

            def test_nothing_captured(atif_golden):
                atif_golden()
            '''
        )
    )
    result = pytester.runpytest("--atif-update")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines_random(
        [
            "*the trajectory file runs/nowhere.json does not exist (atif_golden was given it)",
            "*atif_golden() takes a trajectory as a dict, a path or nothing (the captured one), not a list",
            "*atif_golden() without a trajectory compares the one captured from the test's model traffic (the atif_replay fixture) or from its spans (atif_otel): add one of them*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_missing_binary_fails_the_test_saying_how_to_install_it(pytester, monkeypatch):
    monkeypatch.setenv("ATIF_BIN", str(pytester.path / "no-such-atif"))
    pytester.makepyfile(test_agent=AGENT_TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ATIF_BIN is set to */no-such-atif, which is not an executable file*"])
    assert "Traceback" not in result.stdout.str()
