"""What one test asks of the `atif harness` after its agent's model calls, timed from Python.

Two ways of checking the captured run are interleaved, N rounds each, on a one-exchange replay:
the check of the captured run in one request (the harness writes the server's trajectory
itself; what the plugin does), and the trajectory read over HTTP, written to a file and checked
(what the plugin did before). Both then stop the server for its verdict. The figures are the
mean wall time a test from the check to the verdict; the server's start and the model calls,
the same in both, are left out.

Usage (in the venv where `pip install ./python` put the plugin; `--plugin-src DIR` as in
plugin_cost.py):

    python python/bench/harness_requests.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--plugin-src", type=Path, help="import atif_pytest from this folder")
    args = parser.parse_args()
    if args.plugin_src:
        sys.path.insert(0, str(args.plugin_src.resolve()))
    from atif_pytest import find_atif
    from atif_pytest._golden import check
    from atif_pytest._harness import Harness
    from atif_pytest._server import Server

    with tempfile.TemporaryDirectory(prefix="atif-harness-bench-") as scratch_dir:
        work = Path(scratch_dir)
        request = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        reply = {"model": "m", "choices": [{"message": {"role": "assistant", "content": "hello"}}]}
        exchange = {"method": "POST", "path": "/v1/chat/completions", "request": request, "status": 200, "body": reply}
        script = work / "script.json"
        script.write_text(json.dumps({"format": "atif-replay-script", "version": 2, "model": None,
                                      "calls": [], "recording": {}, "exchanges": [exchange]}))
        harness = Harness(find_atif(), work)
        golden, actual = work / "golden.json", work / "actual.json"

        def one_test(captured: bool, update: bool = False) -> float:
            server = Server(harness, script, record=False)
            call = urllib.request.Request(f"{server.url}/v1/chat/completions", data=json.dumps(request).encode(),
                                          headers={"content-type": "application/json"})
            with urllib.request.urlopen(call) as answer:
                answer.read()
            start = time.perf_counter()
            if not captured:
                actual.write_text(json.dumps(server.trajectory()))
            outcome = check(harness, golden, actual, update=update, update_command="-", cwd=work,
                            captured=captured, scratch=work if captured else None)
            verdict = server.stop()
            elapsed = time.perf_counter() - start
            if not (outcome.matched and verdict.exact):
                sys.exit(f"the run did not match: {outcome.report}\n{verdict.message}")
            return elapsed

        one_test(True, update=True)
        one_request = over_http = 0.0
        for _ in range(args.rounds):
            over_http += one_test(False)
            one_request += one_test(True)
        harness.close()
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    print(f"check of the captured run in one request, then stop: {one_request / args.rounds * 1e3:.2f} ms a test")
    print(f"trajectory over HTTP, written, checked, then stop: {over_http / args.rounds * 1e3:.2f} ms a test")


if __name__ == "__main__":
    main()
