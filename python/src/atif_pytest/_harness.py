"""The one `atif harness` process of a pytest session: each test's server, and its golden checks.

Starting an `atif serve` and an `atif check` process for every test cost more than the tests
themselves in large suites; the harness does the same work in one long-lived process, with the
same code and the same messages (see `atif harness` in crates/atif-cli/src/cmd/harness.rs).
Under pytest-xdist each worker is a process of its own, with a harness of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from atif_pytest._errors import AtifError

# How long the harness may take to exit once its standard input closes.
STOP_TIMEOUT_S = 60.0


class Harness:
    """A running ``atif harness``, asked one JSON request per line."""

    def __init__(self, binary: str, cwd: Path) -> None:
        self._binary = binary
        self._stderr = tempfile.TemporaryFile(mode="w+b")
        env = dict(os.environ)
        # Reports are captured text: no terminal colours in them.
        env.setdefault("NO_COLOR", "1")
        try:
            self._process: Optional[subprocess.Popen] = subprocess.Popen(
                [binary, "harness"],
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as err:
            self._stderr.close()
            raise AtifError(f"could not run {binary}: {err}") from None

    def request(self, message: dict) -> dict:
        """Sends one request and returns the harness's answer.

        Raises:
            AtifError: when the harness has stopped, with what it printed on standard error.
        """
        process = self._process
        if process is None or process.stdin is None or process.stdout is None:
            raise AtifError("the atif harness of this session has already stopped")
        try:
            process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            process.stdin.flush()
            line = process.stdout.readline()
        except OSError:
            line = b""
        if not line:
            raise AtifError(self._stopped())
        try:
            return json.loads(line)
        except ValueError:
            raise AtifError(f"the atif harness answered {line[:200]!r}, which is not JSON") from None

    def close(self) -> None:
        """Closes the harness's standard input, which ends it, and waits for it."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=STOP_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        self._stderr.close()

    def _stopped(self) -> str:
        process = self._process
        status = None
        if process is not None:
            try:
                status = process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                # It closed its output but does not end: stop it, and say what it printed.
                process.kill()
                status = process.wait()
        self._stderr.seek(0)
        stderr = self._stderr.read().decode("utf-8", "replace").strip()
        return (
            f"the atif harness ({self._binary} harness) stopped (exit status {status}); every "
            f"later atif test of this session fails:\n{stderr or '(it printed nothing)'}"
        )
