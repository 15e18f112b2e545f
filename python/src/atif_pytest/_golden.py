"""Comparing a trajectory with its golden file through `atif check`."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from atif_pytest._errors import AtifError

# The values `ATIF_GOLDEN` may take, as `atif check` reads them (docs/golden.md).
GOLDEN_MODES = ("", "auto", "check", "review", "update")


@dataclass(frozen=True)
class CheckOutcome:
    """What `atif check` said: `matched` is False on a behaviour change or a missing golden."""

    matched: bool
    report: str
    pending: bool


def check(
    binary: str,
    golden: Path,
    actual: Path,
    *,
    update: bool,
    update_command: str,
    cwd: Path,
) -> CheckOutcome:
    """Runs ``atif check GOLDEN ACTUAL`` and reads its exit status (0 matched, 1 changed, 2 error).

    ``update_command`` is the command the failure message names to accept a change; ``cwd`` is
    where paths in the message are shown relative to.

    Raises:
        AtifError: when `atif check` could not run (exit 2 or a signal), with its message.
    """
    args = [binary, "check", _shown(golden, cwd), str(actual), "--update-command", update_command]
    if update:
        args.append("--update")
    try:
        done = subprocess.run(
            args, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, env=_env(), check=False
        )
    except OSError as err:
        raise AtifError(f"could not run {binary}: {err}") from None
    stdout = done.stdout.decode("utf-8", "replace").rstrip()
    stderr = done.stderr.decode("utf-8", "replace").rstrip()
    if done.returncode == 0:
        return CheckOutcome(True, stdout, pending=False)
    if done.returncode == 1:
        report = "\n".join(text for text in (stdout, stderr) if text)
        return CheckOutcome(False, report, pending="\npending: " in f"\n{report}")
    raise AtifError(
        f"atif check could not compare with the golden {golden} (exit {done.returncode}):\n"
        f"{stderr or stdout or '(it printed nothing)'}"
    )


def _shown(path: Path, cwd: Path) -> str:
    """The path relative to ``cwd`` when it is inside it, so messages stay short."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _env() -> dict:
    """The environment for `atif check`: ours, without a terminal's colours in captured text."""
    env = dict(os.environ)
    env.setdefault("NO_COLOR", "1")
    return env
