"""`@pytest.mark.atif_live(runs=N)`: the test body run N times against the live model, and the
envelope golden of its behaviour checked (or written) through `atif envelope` (docs/live.md)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest

from atif_pytest._errors import AtifError
from atif_pytest._golden import is_ci
from atif_pytest._harness import Harness
from atif_pytest._server import Server

# The variable that allows live runs on CI, where they are refused: they call the model and cost money.
LIVE_ENV = "ATIF_LIVE"
ORDERS = ("exact", "in-order", "any-order", "subset", "superset")


@dataclass(frozen=True)
class LiveOptions:
    """The keywords of the ``atif_live`` marker."""

    runs: int
    max_cost_tokens: Optional[int] = None
    order: Optional[str] = None
    alpha: Optional[float] = None

    @staticmethod
    def from_marker(marker: pytest.Mark) -> "LiveOptions":
        known = {"runs", "max_cost_tokens", "order", "alpha"}
        unknown = sorted(set(marker.kwargs) - known)
        if unknown:
            raise AtifError(f"@pytest.mark.atif_live got unknown keyword(s): {', '.join(unknown)}")
        runs = marker.kwargs.get("runs", marker.args[0] if marker.args else None)
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise AtifError(f"@pytest.mark.atif_live(runs=N) takes a whole number of runs of at least 1, not {runs!r}")
        cap = marker.kwargs.get("max_cost_tokens")
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise AtifError(f"@pytest.mark.atif_live(max_cost_tokens=N) takes a whole number of tokens, not {cap!r}")
        order = marker.kwargs.get("order")
        if order is not None and order not in ORDERS:
            raise AtifError(f"@pytest.mark.atif_live(order=...) takes one of {', '.join(ORDERS)}, not {order!r}")
        alpha = marker.kwargs.get("alpha")
        if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1):
            raise AtifError(f"@pytest.mark.atif_live(alpha=...) takes a number between 0 and 1, not {alpha!r}")
        return LiveOptions(runs, cap, order, alpha)


def refusal() -> Optional[str]:
    """Why live runs may not start here: on CI (`CI` set) unless ``ATIF_LIVE=1``; else None."""
    ci = os.environ.get("CI")
    if is_ci(ci) and os.environ.get(LIVE_ENV, "").strip() != "1":
        return (
            f"atif_live: refusing to run live on CI (CI={ci}): live runs call the model and cost "
            f"money; set {LIVE_ENV}=1 to run them"
        )
    return None


@dataclass
class LiveRun:
    """One run of the test body: its trajectory file and whether the body passed."""

    path: Path
    passed: bool
    tokens: int


def run_live(
    body: Callable[[], None],
    options: LiveOptions,
    *,
    harness: Harness,
    scratch: Path,
    upstream: Optional[str],
    environment: Callable[[Server], dict],
) -> list[LiveRun]:
    """Runs ``body`` up to ``options.runs`` times, each through a recording server of its own,
    until the runs used ``max_cost_tokens``; returns each run's trajectory, written in ``scratch``."""
    runs: list[LiveRun] = []
    tokens = 0
    for index in range(1, options.runs + 1):
        if options.max_cost_tokens is not None and tokens >= options.max_cost_tokens:
            break
        server = Server(harness, scratch / f"run-{index}.script.json", record=True, upstream=upstream)
        passed = True
        try:
            with pytest.MonkeyPatch.context() as env:
                for name, value in environment(server).items():
                    env.setenv(name, value)
                try:
                    body()
                except (pytest.skip.Exception, KeyboardInterrupt):
                    raise
                except BaseException:  # noqa: BLE001 (a failing or crashing body is a failed run)
                    passed = False
            try:
                trajectory = server.trajectory()
            except AtifError as err:
                trajectory = _crashed_run(str(err))
        finally:
            server.stop()
        used = _tokens(trajectory)
        tokens += used
        path = scratch / f"run-{index}.json"
        path.write_text(json.dumps(trajectory, ensure_ascii=False), encoding="utf-8")
        runs.append(LiveRun(path, passed, used))
    return runs


def _crashed_run(why: str) -> dict:
    """A run that made no model call: no steps, marked crashed with why (as `atif live` does)."""
    return {
        "schema_version": "ATIF-v1.8",
        "session_id": "live",
        "agent": {"name": "pytest", "version": "unknown"},
        "steps": [],
        "extra": {"crashed": True, "error": why},
    }


def _tokens(trajectory: dict) -> int:
    metrics = trajectory.get("final_metrics") or {}
    total = 0
    for name in ("total_prompt_tokens", "total_completion_tokens"):
        value = metrics.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total
