"""One `atif serve` process per test: start it, ask it for the trajectory, stop it for its verdict."""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from atif_pytest._errors import AtifError

# How long `atif serve` may take to print its address, and to stop once asked. Both are
# milliseconds in practice; the bounds only keep a wedged server from hanging the test run.
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Verdict:
    """How the server's run ended: its exit status and what it printed on standard error."""

    exit_code: int
    message: str

    @property
    def exact(self) -> bool:
        """True when every request matched and every recorded exchange was used."""
        return self.exit_code == 0


class Server:
    """A running ``atif serve`` for one test's script."""

    def __init__(
        self,
        binary: str,
        script: Path,
        *,
        record: bool,
        upstream: Optional[str] = None,
        listen: Optional[str] = None,
        drift: Optional[str] = None,
        masks: tuple[str, ...] = (),
        shown: Optional[str] = None,
    ) -> None:
        self.script = script
        self._shown = shown or str(script)
        self.record = record
        args = [binary, "serve", "--script", str(script), "--record" if record else "--replay"]
        if upstream:
            args += ["--upstream", upstream]
        if listen:
            args += ["--listen", listen]
        if drift and not record:
            args += ["--drift", drift]
        for mask in masks:
            args += ["--mask", mask]
        self._stderr = tempfile.TemporaryFile(mode="w+b")
        try:
            self._process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as err:
            self._stderr.close()
            raise AtifError(f"could not run {binary}: {err}") from None
        self._verdict: Optional[Verdict] = None
        self.url, self.token = self._wait_for_address()

    def trajectory(self) -> dict:
        """The trajectory the server captured from the traffic so far, as a dict."""
        if self._verdict is not None:
            raise AtifError(
                "the atif server of this test has already stopped (it stops when the test "
                "function returns): take the trajectory inside the test"
            )
        endpoint = f"{self.url}/_atif/trajectory"
        # The control endpoints answer only requests that carry the run's token.
        request = urllib.request.Request(endpoint, headers={"x-atif-token": self.token})
        try:
            with urllib.request.urlopen(request, timeout=STOP_TIMEOUT_S) as reply:
                body = reply.read()
        except (urllib.error.URLError, OSError) as err:
            raise AtifError(f"could not read the captured trajectory from {endpoint}: {err}") from None
        try:
            document = json.loads(body)
        except ValueError as err:
            raise AtifError(f"{endpoint} did not answer JSON: {err}") from None
        if not isinstance(document, dict):
            raise AtifError(f"{endpoint} answered a JSON {type(document).__name__}, not a trajectory object")
        return document

    def stop(self) -> Verdict:
        """Stops the server (SIGTERM) and returns its verdict; later calls return the same one.

        In record mode, stopping is what saves the script.
        """
        if self._verdict is not None:
            return self._verdict
        if self._process.poll() is None:
            self._process.terminate()
        try:
            exit_code = self._process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            exit_code = self._process.wait()
            self._verdict = Verdict(
                2,
                f"atif serve did not stop within {STOP_TIMEOUT_S:.0f} s of SIGTERM and was killed; "
                f"the script {self._shown} may not have been saved",
            )
            self._close()
            return self._verdict
        self._verdict = Verdict(exit_code, self._read_stderr())
        self._close()
        return self._verdict

    def _wait_for_address(self) -> tuple[str, str]:
        """Reads the first two stdout lines, `listening on http://HOST:PORT` and
        `control token: TOKEN`, within the timeout; returns the URL and the token."""
        first_lines: list[bytes] = []
        arrived = threading.Event()

        def read_stdout() -> None:
            stdout = self._process.stdout
            if stdout is None:
                return
            for line in stdout:
                if len(first_lines) < 2:
                    first_lines.append(line)
                    if len(first_lines) == 2:
                        arrived.set()
            arrived.set()

        self._reader = threading.Thread(target=read_stdout, name="atif-serve-stdout", daemon=True)
        self._reader.start()
        arrived.wait(START_TIMEOUT_S)
        lines = [line.decode("utf-8", "replace").strip() for line in first_lines]
        line = lines[0] if lines else ""
        prefix, token_prefix = "listening on ", "control token: "
        if line.startswith(prefix) and len(lines) == 2 and lines[1].startswith(token_prefix):
            return line[len(prefix):].rstrip("/"), lines[1][len(token_prefix):]
        exited = self._process.poll()
        if exited is None and not self._reader.is_alive():
            # Standard output closed: the process is exiting, so its status is moments away.
            try:
                exited = self._process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pass
        if exited is None:
            self._process.kill()
            self._process.wait()
        details = self._read_stderr().strip()
        self._close()
        what = (
            f"exited with status {exited}"
            if exited is not None
            else f"printed no address within {START_TIMEOUT_S:.0f} s"
        )
        if line:
            details = f"its first line was {line!r}\n{details}".strip()
        raise AtifError(
            f"atif serve could not start for {self._shown} ({what}):\n{details or '(it printed nothing)'}"
        )

    def _read_stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")

    def _close(self) -> None:
        # The process has exited, so the reader thread sees the end of stdout and finishes.
        self._reader.join(timeout=STOP_TIMEOUT_S)
        if self._process.stdout is not None and not self._reader.is_alive():
            self._process.stdout.close()
        self._stderr.close()
