"""The server of one test: start it, ask it for the trajectory, stop it for its verdict."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from atif_pytest._errors import AtifError
from atif_pytest._harness import Harness

# How long reading the captured trajectory may take: milliseconds in practice; the bound only
# keeps a wedged server from hanging the test run.
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
    """The record/replay server of one test, started by the session's ``atif harness`` from the
    arguments `atif serve` takes."""

    def __init__(
        self,
        harness: Harness,
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
        self._harness = harness
        args = ["--script", str(script), "--record" if record else "--replay"]
        if upstream:
            args += ["--upstream", upstream]
        if listen:
            args += ["--listen", listen]
        if drift and not record:
            args += ["--drift", drift]
        for mask in masks:
            args += ["--mask", mask]
        self._verdict: Optional[Verdict] = None
        # The test's directories, as an `atif serve` started now would see them.
        started = harness.request(
            {"op": "serve", "args": args, "cwd": os.getcwd(), "home": os.environ.get("HOME")}
        )
        if "url" not in started:
            details = str(started.get("stderr", "")).strip()
            raise AtifError(
                f"atif serve could not start for {self._shown} (exited with status "
                f"{started.get('code')}):\n{details or '(it printed nothing)'}"
            )
        self.url: str = started["url"]
        self.token: str = started["token"]

    def trajectory(self) -> dict:
        """The trajectory the server captured from the traffic so far, as a dict."""
        self.check_running()
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

    def check_running(self) -> None:
        """Raises when the server has stopped, so its trajectory can no longer be taken."""
        if self._verdict is not None:
            raise AtifError(
                "the atif server of this test has already stopped (it stops when the test "
                "function returns): take the trajectory inside the test"
            )

    def stop(self) -> Verdict:
        """Stops the server and returns its verdict; later calls return the same one.

        In record mode, stopping is what saves the script.
        """
        if self._verdict is not None:
            return self._verdict
        try:
            stopped = self._harness.request({"op": "stop"})
            self._verdict = Verdict(int(stopped.get("code", 2)), str(stopped.get("stderr", "")))
        except AtifError as err:
            self._verdict = Verdict(2, f"{err}\nthe script {self._shown} may not have been saved")
        return self._verdict
