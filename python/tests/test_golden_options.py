"""atif_golden's options: each `atif check` flag is a keyword and an ini option, and does what the flag does."""

import inspect
import json
import re
import subprocess
import textwrap
from dataclasses import dataclass, field

import pytest

from atif_pytest import find_atif
from atif_pytest.plugin import AtifGolden

# Flags of `atif check` that are not comparison options, and why the fixture has no keyword.
NOT_KEYWORDS = {
    "--update": "the plugin's --atif-update and ATIF_GOLDEN decide what is written",
    "--update-command": "the plugin names its own pytest command",
    "--format": "the plugin reads the text report",
    "--color": "reports are captured text",
    "--quiet": "the plugin shows every report",
    "--help": "not an option",
    "--keep-secrets": "a golden is committed, so it never keeps secrets",
    "--html": "writes a page, not a comparison option",
    "--artifacts": "writes files, not a comparison option; ATIF_ARTIFACTS in the environment applies",
    "--junit": "pytest writes JUnit XML itself (--junitxml)",
}
# The flag each keyword gives `atif check`, where the names differ.
FLAG_OF = {
    "compare_content": "--no-content",
    "masks": "--mask",
    "secret_patterns": "--secret-pattern",
    "selectors": "--selector",
}


def calls(order=(("lookup", {"city": "a", "n": 1.0}), ("fetch", {"url": "x"})), tokens=100, extra_step=False):
    """A run of tool calls, for the match modes."""
    steps = [{"step_id": 1, "source": "user", "message": "hi"}]
    for index, (function, arguments) in enumerate(order):
        steps.append({
            "step_id": len(steps) + 1, "source": "agent", "model_name": "m", "message": "",
            "tool_calls": [{"tool_call_id": f"c{index}", "function_name": function, "arguments": arguments}],
            "observation": {"results": [{"source_call_id": f"c{index}", "content": "ok"}]},
            "metrics": {"prompt_tokens": tokens, "completion_tokens": 10},
        })
    if extra_step:
        steps.append({"step_id": len(steps) + 1, "source": "agent", "model_name": "m", "message": "thinking"})
    steps.append({"step_id": len(steps) + 1, "source": "agent", "model_name": "m", "message": "done"})
    return {"schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": steps}


LOOKUP, FETCH = ("lookup", {"city": "a", "n": 1.0}), ("fetch", {"url": "x"})


def run(message="hello 123", prompt_tokens=100, request_id="r1", trace_id="x1", subagents=()):
    document = {
        "schema_version": "ATIF-v1.8",
        "session_id": "s1",
        "agent": {"name": "weather", "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "hi"},
            {
                "step_id": 2,
                "source": "agent",
                "model_name": "m",
                "message": message,
                "metrics": {"prompt_tokens": prompt_tokens, "completion_tokens": 10},
                "extra": {"request_id": request_id, "trace_id": trace_id},
            },
        ],
    }
    if subagents:
        document["subagent_trajectories"] = [
            {
                "schema_version": "ATIF-v1.8",
                "trajectory_id": f"t-{name}",
                "agent": {"name": name, "version": "1", "model_name": "m-mini"},
                "steps": [{"step_id": 1, "source": "agent", "message": f"{name} at work"}],
            }
            for name in subagents
        ]
    return document


@dataclass
class Case:
    keywords: dict
    ini: str
    golden: dict
    actual: dict
    # Whether the actual run matches the golden without the option (with it, the opposite).
    plain_matches: bool = False
    says: list = field(default_factory=list)
    # Options of both checks, so that only the one under test differs.
    base: dict = field(default_factory=dict)
    base_ini: str = ""


CASES = {
    "preset": Case({"preset": "claude-code"}, "atif_preset = claude-code", run(), run(request_id="r2")),
    # The tolerance applies to the Shape's token counts; the content hash sees every token, so
    # both checks leave it out.
    "token_tolerance": Case(
        {"token_tolerance": 0.1},
        "atif_token_tolerance = 0.1",
        run(),
        run(prompt_tokens=105),
        base={"compare_content": False},
        base_ini="atif_compare_content = false",
    ),
    "compare_content": Case(
        {"compare_content": False}, "atif_compare_content = false", run(), run(message="hello 456")
    ),
    "volatile": Case({"volatile": ["trace_id"]}, "atif_volatile = trace_id", run(), run(trace_id="x2")),
    "selectors": Case(
        {"selectors": ".steps[].extra.request_id"},
        "atif_selectors = .steps[].extra.request_id",
        run(),
        run(request_id="r2"),
    ),
    "masks": Case({"masks": [r"\d+=N"]}, r"atif_golden_masks = \d+=N", run(), run(message="hello 456")),
    "secret_patterns": Case(
        {"secret_patterns": r"hello \d+"}, r"atif_secret_patterns = hello \d+", run(), run(message="hello 456")
    ),
    "keep_subagent_order": Case(
        {"keep_subagent_order": True},
        "atif_keep_subagent_order = true",
        run(subagents=["alpha", "beta"]),
        run(subagents=["beta", "alpha"]),
        plain_matches=True,
    ),
    "max_input_bytes": Case(
        {"max_input_bytes": "100"},
        "atif_max_input_bytes = 100",
        run(),
        run(),
        plain_matches=True,
        says=["*atif check could not compare with the golden*", "*larger than the input limit of 100 bytes"],
    ),
    "sequence": Case({"sequence": "any-order"}, "atif_sequence = any-order", calls(), calls((FETCH, LOOKUP))),
    "arguments": Case(
        {"arguments": "ignore"}, "atif_arguments = ignore", calls(), calls((("lookup", {"city": "zz", "n": 1.0}), FETCH))
    ),
    "arguments_for": Case(
        {"arguments_for": ["lookup=ignore"]},
        "atif_arguments_for = lookup=ignore",
        calls(),
        calls((("lookup", {"city": "zz", "n": 1.0}), FETCH)),
    ),
    "number_tolerance": Case(
        {"number_tolerance": 0.1},
        "atif_number_tolerance = 0.1",
        calls(),
        calls((("lookup", {"city": "a", "n": 1.05}), FETCH)),
    ),
    "token_band": Case({"token_band": "10%"}, "atif_token_band = 10%", calls(), calls(tokens=105)),
    # One more step is one more LLM call too: each band is tried with the other one given.
    "step_band": Case(
        {"step_band": "1"},
        "atif_step_band = 1",
        calls(),
        calls(extra_step=True),
        base={"llm_calls_band": "1"},
        base_ini="atif_llm_calls_band = 1",
    ),
    "llm_calls_band": Case(
        {"llm_calls_band": "1"},
        "atif_llm_calls_band = 1",
        calls(),
        calls(extra_step=True),
        base={"step_band": "1"},
        base_ini="atif_step_band = 1",
    ),
}

TESTS = textwrap.dedent(
    '''
    import json

    KEYWORDS = json.loads(open("keywords.json").read())
    BASE = json.loads(open("base.json").read())

    def test_plain(atif_golden):
        atif_golden("actual.json", **BASE)

    def test_keyword(atif_golden):
        atif_golden("actual.json", **BASE, **KEYWORDS)
    '''
)


def test_every_comparison_flag_of_atif_check_is_a_keyword_and_an_ini_option(pytester):
    done = subprocess.run([find_atif(), "check", "--help"], capture_output=True, text=True, check=True)
    flags = set(re.findall(r"^\s+(?:-\w, )?(--[a-z-]+)", done.stdout, re.M))
    assert "--token-tolerance" in flags, done.stdout
    keywords = set(inspect.signature(AtifGolden.__call__).parameters) - {"self", "trajectory", "name"}
    given = {FLAG_OF.get(keyword, "--" + keyword.replace("_", "-")) for keyword in keywords}
    assert given == flags - set(NOT_KEYWORDS), "a flag of `atif check` that atif_golden lacks, or the reverse"
    assert set(CASES) == keywords, "each keyword needs a case below"
    pytester.makeini("[pytest]\n" + "\n".join(case.ini for case in CASES.values()))
    config = pytester.parseconfig()
    for keyword in keywords:
        name = "atif_golden_masks" if keyword == "masks" else f"atif_{keyword}"
        assert config.getini(name) not in (None, "", []), name


@pytest.mark.parametrize("keyword", sorted(CASES))
def test_each_option_as_a_keyword_and_as_an_ini_option_changes_the_check_as_its_flag_does(pytester, keyword):
    case = CASES[keyword]
    (pytester.path / "golden.json").write_text(json.dumps(case.golden))
    (pytester.path / "actual.json").write_text(json.dumps(case.actual))
    (pytester.path / "keywords.json").write_text(json.dumps(case.keywords))
    (pytester.path / "base.json").write_text(json.dumps(case.base))
    goldens = pytester.path / "tests" / "golden"
    goldens.mkdir(parents=True)
    for test in ("test_plain", "test_keyword"):
        written = subprocess.run(
            [find_atif(), "check", "--update", str(goldens / f"test_case__{test}.json"), "golden.json"],
            cwd=pytester.path,
            capture_output=True,
            text=True,
        )
        assert written.returncode == 0, written.stderr
    pytester.makepyfile(test_case=TESTS)
    plain = "passed" if case.plain_matches else "failed"
    with_option = "failed" if case.plain_matches else "passed"

    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.stdout.fnmatch_lines_random(
        [f"{plain.upper()} test_case.py::test_plain*", f"{with_option.upper()} test_case.py::test_keyword*"]
    )
    if case.says:
        result.stdout.fnmatch_lines(case.says)

    pytester.makeini(f"[pytest]\n{case.ini}\n{case.base_ini}\n")
    (pytester.path / "base.json").write_text("{}")
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA", "test_case.py::test_plain")
    result.stdout.fnmatch_lines([f"{with_option.upper()} test_case.py::test_plain*"])


def test_a_keyword_of_the_wrong_type_fails_the_test_saying_what_it_takes(pytester):
    pytester.makepyfile(
        test_wrong=textwrap.dedent(
            '''
            def test_tolerance(atif_golden):
                atif_golden({}, token_tolerance="a lot")

            def test_content(atif_golden):
                atif_golden({}, compare_content="no")
            '''
        )
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "*token_tolerance takes a number such as 0.1, not 'a lot'",
            "*atif_golden(compare_content=...) takes True or False, not 'no'",
        ]
    )
    assert "Traceback" not in result.stdout.str()
