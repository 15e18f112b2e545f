"""ATIF_GOLDEN and CI are read as `atif check` reads them: each case checked against the real binary."""

import json
import os
import subprocess

import pytest

from atif_pytest import AtifError, find_atif
from atif_pytest._golden import golden_mode, is_ci

# (ATIF_GOLDEN, CI, mode): the cases of crates/atif-golden/src/mode.rs's tests, then the edges
# where Python's own trimming and lower-casing would differ from Rust's.
CASES = [
    (None, None, "review"),
    (None, "true", "check"),
    ("", "1", "check"),
    ("auto", "false", "review"),
    ("auto", "0", "review"),
    ("auto", "", "review"),
    ("review", "true", "check"),
    ("review", None, "review"),
    ("update", "true", "update"),
    (" Update ", None, "update"),
    ("check", None, "check"),
    ("updte", None, "error"),
    (None, "FALSE", "review"),
    (None, "yes", "check"),
    (None, "  ", "review"),
    (None, " false\t", "review"),
    ("UPDATE", "0", "update"),
    ("Review", "TRUE", "check"),
    ("auto\t", None, "review"),
    # Unicode white space is trimmed, as Rust's `trim` does ...
    ("\u00a0update\u3000", None, "update"),
    # ... but not U+001C, which Python's `strip()` would remove.
    ("\x1cupdate", None, "error"),
    # Only ASCII letters change case: the Kelvin sign lower-cases to `k` in Python, not in Rust.
    ("chec\u212a", None, "error"),
    (None, "FAL\u017fE", "check"),
]


def test_the_modes_match_the_rust_tables_cases():
    for mode, ci, expected in CASES:
        if expected == "error":
            with pytest.raises(AtifError) as raised:
                golden_mode(mode, ci)
            assert str(raised.value) == (
                f"unknown ATIF_GOLDEN value `{mode}`: expected one of auto, check, review, update (or unset)"
            )
        else:
            assert golden_mode(mode, ci) == expected, (mode, ci)


def test_is_ci_matches_the_rust_rule():
    cases = [
        (None, False), ("", False), ("0", False), ("false", False), ("FALSE", False), (" 0 ", False),
        ("true", True), ("1", True), ("yes", True), ("\x1c", True),
    ]
    for value, expected in cases:
        assert is_ci(value) is expected, value


@pytest.mark.parametrize("mode, ci, expected", CASES, ids=[repr(case[:2]) for case in CASES])
def test_atif_check_reads_each_case_as_the_plugin_does(tmp_path, mode, ci, expected):
    """The differential half: what `atif check` does with a changed run tells its mode."""
    (tmp_path / "old.json").write_text(json.dumps(trajectory("old")))
    (tmp_path / "new.json").write_text(json.dumps(trajectory("new")))
    env = {name: value for name, value in os.environ.items() if name not in ("ATIF_GOLDEN", "CI")}
    subprocess.run([find_atif(), "check", "--update", "g.json", "old.json"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    kept = (tmp_path / "g.json").read_text()
    if mode is not None:
        env["ATIF_GOLDEN"] = mode
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run([find_atif(), "check", "g.json", "new.json"], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    if done.returncode == 2 and "unknown ATIF_GOLDEN value" in done.stderr:
        seen = "error"
    elif done.returncode == 0 and (tmp_path / "g.json").read_text() != kept:
        seen = "update"
    elif done.returncode == 1:
        seen = "review" if (tmp_path / "g.json.new").is_file() else "check"
    else:
        pytest.fail(f"atif check exited {done.returncode}: {done.stdout}{done.stderr}")
    assert seen == expected, done.stderr


def trajectory(message):
    return {
        "schema_version": "ATIF-v1.8",
        "session_id": "s1",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": message}],
    }
