"""What atif_replay and atif_golden cost per test: one suite of N agent tests, twice.

The agent makes three model calls on the official openai SDK (a tool call, the answer after
the tool's result, and a follow-up without tools). Its scripts are recorded once against the
workspace's fake provider. The atif suite replays each test's script through `atif_replay` and
checks its golden through `atif_golden()`; the plain suite runs the same agent against one
`atif serve --replay` of all the scripts together, started before the session, so both pay
the same replayed HTTP and only the atif suite pays the plugin. The plugin's cost per test is
the difference of the two suites' wall times over N, for a plain run and under pytest-xdist,
and the difference of the CPU time they use (pytest, its workers and every `atif` process of
the run, the plain suite's server included), which a loaded machine inflates much less.

Usage (in the venv where `pip install ./python` put the plugin, with openai and pytest-xdist):

    python python/bench/plugin_cost.py [--tests 200] [--runs 3] [--workers 0,2]

The fake provider is `$ATIF_FAKE_PROVIDER`, else `target/debug/atif-fake-provider`
(`cargo build -p atif-fake-provider`). `--plugin-src DIR` imports atif_pytest from DIR instead
of the installed one, to measure another version of the plugin with the same binary.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from atif_pytest import find_atif

AGENT = textwrap.dedent(
    '''
    from openai import OpenAI

    SHELL = {"type": "function", "function": {"name": "shell", "description": "run a command",
             "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                            "required": ["command"]}}}

    def run(prompt):
        """Three model calls: the tool call, the answer, and a follow-up without tools."""
        client = OpenAI(max_retries=0)
        messages = [{"role": "user", "content": prompt}]
        reply = client.chat.completions.create(model="fake-model", messages=messages, tools=[SHELL])
        call = reply.choices[0].message.tool_calls[0]
        messages.append(reply.choices[0].message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "42"})
        answer = client.chat.completions.create(model="fake-model", messages=messages, tools=[SHELL])
        messages.append({"role": "assistant", "content": answer.choices[0].message.content})
        messages.append({"role": "user", "content": "Say it in one word."})
        client.chat.completions.create(model="fake-model", messages=messages)
        return answer.choices[0].message.content
    '''
)

PLAIN_CONFTEST = textwrap.dedent(
    '''
    import os

    import pytest

    @pytest.fixture(autouse=True)
    def _fake_provider(monkeypatch):
        monkeypatch.setenv("OPENAI_BASE_URL", os.environ["BENCH_FAKE_URL"] + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "bench")
    '''
)

TESTS = textwrap.dedent(
    '''
    import pytest

    import agent

    @pytest.mark.parametrize("case", range({n}))
    def test_case({fixtures}case):
        agent.run(f"What is 6 * 7? (case {{case}})")
        {golden}
    '''
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3, help="runs of each suite; the best is kept")
    parser.add_argument("--workers", default="0,2", help="pytest-xdist worker counts (0: no xdist)")
    parser.add_argument("--plugin-src", type=Path, help="import atif_pytest from this folder")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[2]
    fake = os.environ.get("ATIF_FAKE_PROVIDER") or str(root / "target" / "debug" / "atif-fake-provider")
    env = dict(os.environ)
    env.pop("CI", None)
    env.pop("ATIF_GOLDEN", None)
    if args.plugin_src:
        env["PYTHONPATH"] = os.pathsep.join([str(args.plugin_src.resolve()), env.get("PYTHONPATH", "")])
    provider = subprocess.Popen([fake], stdout=subprocess.PIPE, text=True)
    try:
        line = provider.stdout.readline().strip() if provider.stdout else ""
        if not line.startswith("listening on "):
            sys.exit(f"{fake} printed {line!r} instead of its address")
        env["BENCH_FAKE_URL"] = line[len("listening on "):]
        with tempfile.TemporaryDirectory(prefix="atif-bench-") as folder:
            project = Path(folder)
            write_project(project, args.tests)
            record = ["--atif-record", "--atif-update", "--atif-upstream", env["BENCH_FAKE_URL"]]
            pytest(project, env, ["atif"] + record, check=True)
            combined = combine_scripts(project / "tests" / "scripts", project / "all-scripts.json")
            print(f"{args.tests} tests, best of {args.runs} runs; load average {os.getloadavg()[0]:.1f} at start")
            for workers in [int(count) for count in args.workers.split(",")]:
                xdist = ["-n", str(workers)] if workers else []
                plain = best(args.runs, lambda: plain_run(project, env, combined, xdist))
                atif = best(args.runs, lambda: timed(lambda: pytest(project, env, ["atif"] + xdist)))
                label = f"-n {workers}" if workers else "no xdist"
                for what, index in (("wall", 0), ("CPU", 1)):
                    cost = (atif[index] - plain[index]) / args.tests * 1000
                    print(
                        f"{label}, {what}: plain {plain[index]:.2f} s "
                        f"({plain[index] / args.tests * 1000:.1f} ms a test), atif {atif[index]:.2f} s "
                        f"({atif[index] / args.tests * 1000:.1f} ms a test), plugin cost {cost:.1f} ms a test"
                    )
            print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        provider.kill()
        provider.wait()
    return 0


def combine_scripts(folder: Path, combined: Path) -> Path:
    """One script holding the exchanges of every test's script, for the plain suite's server."""
    scripts = sorted(folder.glob("*.json"))
    document = json.loads(scripts[0].read_text())
    document["exchanges"] = [
        exchange for script in scripts for exchange in json.loads(script.read_text())["exchanges"]
    ]
    combined.write_text(json.dumps(document))
    return combined


def plain_run(project: Path, env: dict, script: Path, xdist: list) -> tuple[float, float]:
    """The plain suite against a fresh replay server of all the scripts: its wall time, and the
    CPU time of the suite and of the server, its start-up included."""
    server = subprocess.Popen(
        [find_atif(), "serve", "--script", str(script), "--replay"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    line = server.stdout.readline().strip() if server.stdout else ""
    if not line.startswith("listening on "):
        sys.exit(f"atif serve printed {line!r} instead of its address")
    url = line[len("listening on "):]
    before = children_cpu()
    wall = pytest(project, {**env, "BENCH_FAKE_URL": url}, ["plain"] + xdist)
    server.terminate()
    server.wait()
    # The server's start-up, before the suite, is part of its CPU time; it is one process
    # start of the whole run, like the harness's start in the atif suite.
    return wall, children_cpu() - before


def timed(run) -> tuple[float, float]:
    """The wall time `run` returns and the CPU time of the processes it waited for."""
    before = children_cpu()
    wall = run()
    return wall, children_cpu() - before


def children_cpu() -> float:
    """User and system CPU time of every finished child process (and theirs), in seconds."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write_project(project: Path, n_tests: int) -> None:
    (project / "agent.py").write_text(AGENT)
    (project / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    for suite, fixtures, golden in (("plain", "", ""), ("atif", "atif_replay, atif_golden, ", "atif_golden()")):
        (project / suite).mkdir()
        (project / suite / f"test_{suite}.py").write_text(TESTS.format(n=n_tests, fixtures=fixtures, golden=golden))
    (project / "plain" / "conftest.py").write_text(PLAIN_CONFTEST)


def pytest(project: Path, env: dict, args: list, check: bool = True) -> float:
    """Runs pytest on the project and returns its wall time in seconds; a failure stops the bench."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if check and done.returncode != 0:
        sys.exit(f"pytest {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return elapsed


def best(runs: int, measure) -> tuple[float, float]:
    """The best wall time and the best CPU time of `runs` measurements."""
    results = [measure() for _ in range(runs)]
    return min(wall for wall, _ in results), min(cpu for _, cpu in results)


if __name__ == "__main__":
    sys.exit(main())
