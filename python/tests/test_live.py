"""@pytest.mark.atif_live: the test body run N times against a sampling model (the fake provider's
seeded sampling mode), and the envelope golden of its behaviour written, then checked."""

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

# The docs' agent (tests/fixtures/docs/agent.py) as a test: it offers read, grep and write, and
# answers every call with a canned result; the standard library only.
TESTS = textwrap.dedent(
    '''
    import json
    import os
    import urllib.request

    import pytest

    TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
             for name in ("read", "grep", "write")]

    def ask(messages):
        body = json.dumps({"model": "fake-model", "messages": messages, "tools": TOOLS}).encode()
        request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                         headers={"content-type": "application/json", "authorization": "Bearer sk-none"})
        with urllib.request.urlopen(request) as response:
            return json.load(response)["choices"][0]["message"]

    @pytest.mark.atif_live(runs=RUNS, max_cost_tokens=CAP, order=ORDER)
    def test_triage():
        messages = [{"role": "user", "content": "find the bug in parse.py"}]
        for _ in range(10):
            message = ask(messages)
            calls = message.get("tool_calls") or []
            if not calls:
                return
            messages.append(message)
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
        raise AssertionError("the agent never answered")
    '''
)


def sampling_provider(extra: float, seed: int):
    """Starts the fake provider in its sampling mode; returns (process, url)."""
    binary = os.environ.get("ATIF_FAKE_PROVIDER") or str(
        Path(__file__).resolve().parents[2] / "target" / "debug" / "atif-fake-provider"
    )
    if not Path(binary).is_file():
        message = f"skipped: {binary} not found; build it with `cargo build -p atif-fake-provider`"
        if os.environ.get("ATIF_E2E_REQUIRED") == "1":
            pytest.fail(message.replace("skipped: ", ""), pytrace=False)
        pytest.skip(message)
    args = ["--sample-seed", str(seed), "--sample-extra", str(extra), "--sample-swap", "0.3", "--sample-token-band", "0.1"]
    process = subprocess.Popen([binary, "--listen", "127.0.0.1:0", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip() if process.stdout else ""
    assert line.startswith("listening on "), line
    return process, line[len("listening on "):]


def run_against(pytester, extra, seed, *args, runs=20, cap=None, order="exact"):
    tests = TESTS.replace("RUNS", str(runs)).replace("CAP", repr(cap)).replace("ORDER", repr(order))
    pytester.makepyfile(test_triage=tests)
    process, url = sampling_provider(extra, seed)
    try:
        return pytester.runpytest("--atif-upstream", url, "--junitxml=junit.xml", *args)
    finally:
        process.kill()
        process.wait()


ENVELOPE = Path("tests/golden/test_triage__test_triage.envelope.json")


def test_update_writes_the_envelope_and_the_same_model_passes_while_a_moved_one_fails(pytester):
    written = run_against(pytester, 0.1, 1, "--atif-update", runs=40)
    written.assert_outcomes(passed=1)
    written.stdout.fnmatch_lines(["*wrote envelope golden tests/golden/test_triage__test_triage.envelope.json (40 runs)"])
    envelope = json.loads((pytester.path / ENVELOPE).read_text())
    assert (envelope["runs"], envelope["passed_runs"]) == (40, 40)
    assert envelope["tool_runs"]["read"] == 40

    same = run_against(pytester, 0.1, 2)
    same.assert_outcomes(passed=1)
    assert 'name="atif.verdict" value="no-clear-change"' in (pytester.path / "junit.xml").read_text()

    moved = run_against(pytester, 0.8, 3)
    moved.assert_outcomes(failed=1)
    moved.stdout.fnmatch_lines(
        [
            "*live runs moved from the envelope golden tests/golden/test_triage__test_triage.envelope.json:",
            "*tool_runs.write: `write` called in */20 runs, was */40*",
            "*if this change is intended, re-record it: pytest --atif-update test_triage.py::test_triage",
        ]
    )
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="atif.verdict" value="changed"' in junit


def test_the_token_cap_stops_early_and_too_few_runs_are_inconclusive(pytester):
    run_against(pytester, 0.1, 1, "--atif-update", runs=40).assert_outcomes(passed=1)
    capped = run_against(pytester, 0.1, 2, "-rA", runs=20, cap=1000)
    capped.assert_outcomes(passed=1)
    capped.stdout.fnmatch_lines(["*inconclusive: no field moved, but * runs per side cannot reliably see*"])


def test_the_order_keyword_takes_each_sequence_mode_and_nothing_else(pytester):
    run_against(pytester, 0.1, 1, "--atif-update", runs=6, order="in-order").assert_outcomes(passed=1)
    envelope = json.loads((pytester.path / ENVELOPE).read_text())
    assert envelope["order"] == "in-order"
    # Under in-order a variant is one sequence of calls, steps aside.
    assert all(len(variant["calls"]) == 1 for variant in envelope["variants"]), envelope["variants"]
    bad = run_against(pytester, 0.1, 1, "--atif-update", runs=2, order="sideways")
    assert bad.ret != 0
    bad.stdout.fnmatch_lines(["*atif_live(order=...) takes one of exact, in-order, any-order, subset, superset, not 'sideways'*"])


def test_without_the_order_keyword_the_project_files_sequence_groups_the_variants(pytester):
    pytester.makefile(".toml", atif='[defaults]\nsequence = "any-order"\n')
    run_against(pytester, 0.1, 1, "--atif-update", runs=6, order=None).assert_outcomes(passed=1)
    envelope = json.loads((pytester.path / ENVELOPE).read_text())
    assert envelope["order"] == "any-order"
    run_against(pytester, 0.1, 1, "--atif-update", runs=6, order="exact").assert_outcomes(passed=1)
    assert json.loads((pytester.path / ENVELOPE).read_text())["order"] == "exact"


def test_a_missing_envelope_fails_naming_the_command_that_records_it(pytester):
    result = run_against(pytester, 0.1, 1, runs=2)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*no envelope golden at tests/golden/test_triage__test_triage.envelope.json; record it from live runs with: pytest --atif-update test_triage.py::test_triage"]
    )


def test_live_runs_are_refused_on_ci_unless_atif_live_is_one(pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    refused = run_against(pytester, 0.1, 1, "-rs", "--atif-update", runs=2)
    refused.assert_outcomes(skipped=1)
    refused.stdout.fnmatch_lines(["*refusing to run live on CI (CI=true)*set ATIF_LIVE=1 to run them"])
    assert not (pytester.path / ENVELOPE).exists()
    monkeypatch.setenv("ATIF_LIVE", "1")
    run_against(pytester, 0.1, 1, "--atif-update", runs=2).assert_outcomes(passed=1)
