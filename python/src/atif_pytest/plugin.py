"""The pytest plugin: command-line options, the `atif_replay` and `atif_golden` fixtures, reports.

Registered through the ``pytest11`` entry point of the `atif` wheel, so installing the wheel is
all it takes. Every check is the `atif` binary's; this module only names files, starts and
stops processes, and turns their verdicts into test failures.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import site
import subprocess
import sysconfig
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import pytest

from atif_pytest._binary import find_atif
from atif_pytest._errors import AtifError
from atif_pytest._golden import MODE_ENV, GoldenOptions, check, golden_mode, is_ci
from atif_pytest._harness import Harness
from atif_pytest._live import LiveOptions, refusal, run_live
from atif_pytest._names import base_name, sanitize
from atif_pytest._otel import AtifOtel
from atif_pytest._server import Server, Verdict

# A dummy key for each SDK that refuses to start without one; replay never uses it.
_DUMMY_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("atif", "golden trajectories and model replay (atif)")
    group.addoption(
        "--atif-record",
        action="store_true",
        help="record each atif_replay test's model traffic into its script instead of replaying "
        "it (refused on CI)",
    )
    group.addoption(
        "--atif-upstream",
        metavar="URL",
        help="with --atif-record, and for atif_live tests: the provider origin to record from "
        "(default: each protocol's public endpoint); replays ignore it",
    )
    group.addoption(
        "--atif-update",
        action="store_true",
        help="atif_golden writes goldens that no longer match, and missing ones (same as "
        "ATIF_GOLDEN=update)",
    )
    group.addoption(
        "--atif-listen",
        metavar="ADDR",
        help="a fixed address for atif serve (default: a free port per test), for agents "
        "configured by file; one test at a time",
    )
    group.addoption(
        "--atif-drift",
        choices=("strict", "warn"),
        default="strict",
        help="strict (default): a request that matches no recorded one fails; warn: serve the "
        "nearest one and report the difference",
    )
    parser.addini(
        "atif_script_dir",
        "folder of the replay scripts, relative to the rootdir (default tests/scripts)",
        default="tests/scripts",
    )
    parser.addini(
        "atif_golden_dir",
        "folder of the golden trajectories, relative to the rootdir (default tests/golden)",
        default="tests/golden",
    )
    parser.addini(
        "atif_masks",
        "regular expressions atif serve masks in requests before matching them (--mask)",
        type="linelist",
        default=[],
    )
    for name, help_text, kind, default in _GOLDEN_INI:
        parser.addini(name, help_text, type=kind, default=default)


# The ini options of `atif_golden`: one per keyword, each an `atif check` flag (docs/python.md).
_GOLDEN_INI = (
    ("atif_preset", "atif_golden: start from a named preset (atif check --preset)", "string", ""),
    (
        "atif_token_tolerance",
        "atif_golden: relative band allowed on prompt and completion tokens, e.g. 0.1 "
        "(atif check --token-tolerance)",
        "string",
        "",
    ),
    (
        "atif_compare_content",
        "atif_golden: compare the content hash (default true; false is atif check --no-content)",
        "bool",
        True,
    ),
    ("atif_volatile", "atif_golden: keys removed at every depth, one per line (--volatile)", "linelist", []),
    (
        "atif_selectors",
        "atif_golden: insta-style selectors whose values are removed, or replaced with SELECTOR=TEXT, "
        "one per line (atif check --selector)",
        "linelist",
        [],
    ),
    (
        "atif_golden_masks",
        "atif_golden: REGEX=REPLACEMENT masks of string values, one per line (atif check --mask)",
        "linelist",
        [],
    ),
    (
        "atif_keep_subagent_order",
        "atif_golden: keep embedded subagents in their recorded order (--keep-subagent-order)",
        "bool",
        False,
    ),
    (
        "atif_secret_patterns",
        "atif_golden: also redact every match of these regexes, one per line (--secret-pattern)",
        "linelist",
        [],
    ),
    (
        "atif_max_input_bytes",
        "atif_golden: the most bytes read from one trajectory, e.g. 200MiB (--max-input-bytes)",
        "string",
        "",
    ),
    ("atif_sequence", "atif_golden: the match mode of the tool sequence (--sequence)", "string", ""),
    ("atif_arguments", "atif_golden: the match mode of tool arguments (--arguments)", "string", ""),
    ("atif_arguments_for", "atif_golden: TOOL=MODE, one per line (--arguments-for)", "linelist", []),
    (
        "atif_number_tolerance",
        "atif_golden: numbers in arguments within this difference are equal (--number-tolerance)",
        "string",
        "",
    ),
    ("atif_step_band", "atif_golden: the band of the step count, N or P% (--step-band)", "string", ""),
    ("atif_llm_calls_band", "atif_golden: the band of the LLM calls, N or P% (--llm-calls-band)", "string", ""),
    ("atif_token_band", "atif_golden: the band of the tokens, N or P% (--token-band)", "string", ""),
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "atif_script(path): the replay script of this test, instead of the default"
    )
    config.addinivalue_line(
        "markers",
        "atif_live(runs=N, max_cost_tokens=None, order=None, alpha=None): run the test body N "
        "times against the live model and check the envelope golden of its behaviour "
        "(--atif-update writes it; refused on CI unless ATIF_LIVE=1)",
    )
    try:
        golden_mode(os.environ.get(MODE_ENV), os.environ.get("CI"))
    except AtifError as err:
        raise pytest.UsageError(str(err)) from None
    record = config.getoption("--atif-record")
    if record and is_ci(os.environ.get("CI")):
        raise pytest.UsageError(
            f"--atif-record is refused on CI (CI={os.environ.get('CI')}): recording calls the "
            "live model and rewrites committed scripts; record locally, review the script's diff "
            "and commit it"
        )
    config.stash[_STATE] = _State(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On a pytest-xdist worker: hand what this worker did to the controller, for its summary."""
    config = session.config
    state = config.stash.get(_STATE, None)
    workeroutput = getattr(config, "workeroutput", None)
    if state is None or workeroutput is None:
        return
    workeroutput["atif"] = {
        "recorded": [str(path) for path in state.recorded],
        "golden_lines": list(state.golden_lines),
        "pending": [str(path) for path in state.pending],
    }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """On the pytest-xdist controller: add a finished worker's records to the session summary."""
    state = node.config.stash.get(_STATE, None)
    done = getattr(node, "workeroutput", None) or {}
    if state is None or "atif" not in done:
        return
    state.recorded += [Path(path) for path in done["atif"]["recorded"]]
    state.golden_lines += done["atif"]["golden_lines"]
    state.pending += [Path(path) for path in done["atif"]["pending"]]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    if call.when != "call":
        return
    replay = item.stash.get(_REPLAY, None)
    if replay is None:
        return
    report: pytest.TestReport = outcome.get_result()
    # The test function has returned (or raised): stop the server now, so its verdict (and, when
    # recording, the saved script) belongs to this test's report, crash or not.
    verdict = replay._server.stop()
    state = item.config.stash[_STATE]
    if replay.recording:
        if verdict.exit_code == 0:
            state.recorded.append(replay.script)
        else:
            _fail_report(report, _record_failure(_shown(replay.script, state.cwd), verdict))
        return
    if verdict.exact:
        # `--atif-drift warn` served drifted requests anyway: the test stands, the report says so.
        warnings = _warnings(verdict.message)
        if warnings:
            report.sections.append(("atif replay warnings", warnings))
        return
    script = _shown(replay.script, state.cwd)
    failure = _replay_failure(script, verdict, state.pytest_command("--atif-record", item))
    refused = call.excinfo is not None and _refused_by_server(call.excinfo.value, verdict.message)
    if refused and not item.config.getoption("fulltrace"):
        # The SDK raised because the server refused a request: the verdict says why, with the
        # request's diff, so the report is the test's own frames and the verdict, once.
        # The heading stays first, so pytest's short summary line says what failed.
        heading, _, details = failure.partition("\n")
        report.longrepr = f"{heading}\n{_user_frames(call.excinfo, state.cwd)}\n{details}"
        return
    _fail_report(report, failure)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    lines = [f"recorded {_shown(path, state.cwd)}" for path in state.recorded]
    lines += state.golden_lines
    if state.pending and state.has_golden_review():
        lines.append(
            f"{len(state.pending)} golden(s) left a pending .json.new file for review: "
            f"atif golden review --dir {_shown(state.golden_dir, state.cwd)}"
        )
    if lines:
        terminalreporter.write_sep("-", "atif")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """Runs a test marked ``atif_live`` N times, each against the live model through a recording
    server of its own, then checks the envelope golden of the runs (docs/live.md)."""
    marker = pyfuncitem.get_closest_marker("atif_live")
    if marker is None:
        return None
    why = refusal()
    if why is not None:
        pytest.skip(why)
    state: _State = pyfuncitem.config.stash[_STATE]
    try:
        options = LiveOptions.from_marker(marker)
    except AtifError as err:
        pytest.fail(str(err), pytrace=False)
    names = pyfuncitem._fixtureinfo.argnames
    arguments = {name: pyfuncitem.funcargs[name] for name in names}
    envelope = state.golden_dir / f"{base_name(pyfuncitem.path, pyfuncitem.nodeid)}.envelope.json"
    # The runs' scripts and trajectories are the session's scratch: only the envelope is kept.
    with tempfile.TemporaryDirectory(prefix="atif-live-") as scratch:
        runs = run_live(
            lambda: pyfuncitem.obj(**arguments),
            options,
            harness=state.harness(),
            scratch=Path(scratch),
            upstream=state.upstream,
            environment=lambda server: AtifReplay(
                server.url, server.script, True, server, state.upstream
            ).environment(state.dummy_keys),
        )
        failure = _check_envelope(state, pyfuncitem, envelope, runs, options)
    if failure is not None:
        pytest.fail(failure, pytrace=False)
    return True


def _check_envelope(state: "_State", item: pytest.Item, envelope: Path, runs, options: LiveOptions) -> Optional[str]:
    """Checks (or writes) the envelope of ``runs`` with `atif envelope`; the failure, or None."""
    update = state.update or os.environ.get(MODE_ENV, "").strip().lower() == "update"
    shown = _shown(envelope, state.cwd)
    command = state.pytest_command("--atif-update", item)
    if not update and not envelope.is_file():
        return f"no envelope golden at {shown}; record it from live runs with: {command}"
    args = ["atif", "envelope", str(envelope), *(str(run.path) for run in runs)]
    args += ["--outcomes", ",".join("pass" if run.passed else "fail" for run in runs)]
    if options.alpha is not None:
        args += ["--alpha", repr(options.alpha)]
    if update:
        envelope.parent.mkdir(parents=True, exist_ok=True)
        args.append("--update")
        if options.order is not None:
            # Without it, `atif envelope` takes the golden's `sequence` from atif.toml, else exact.
            args += ["--order", options.order]
    done = state.harness().request({"op": "check", "args": args})
    code = done.get("code")
    stdout = str(done.get("stdout", "")).rstrip()
    stderr = str(done.get("stderr", "")).rstrip()
    item.user_properties.append(("atif.envelope", shown))
    if code == 0:
        if update:
            state.golden_lines.append(f"wrote envelope golden {shown} ({len(runs)} runs)")
            item.user_properties.append(("atif.verdict", "written"))
        else:
            item.user_properties.append(("atif.verdict", stdout.split(":", 1)[0].replace(" ", "-")))
            item.add_report_section("call", "atif live", stdout)
        return None
    if code == 1:
        item.user_properties.append(("atif.verdict", "changed"))
        report = "\n".join(text for text in (stdout, stderr) if text)
        return f"live runs moved from the envelope golden {shown}:\n{report}\nif this change is intended, re-record it: {command}"
    return f"atif envelope could not check {shown} (exit {code}):\n{stderr or stdout or '(it printed nothing)'}"


@pytest.fixture
def atif_replay(request: pytest.FixtureRequest):
    """Replays the model for this test from its script (``--atif-record`` records it instead).

    Starts ``atif serve`` on a free port for ``<atif_script_dir>/<module>__<test>.json``, points
    ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL`` (and their aliases)
    at it for the test's duration, and when the test function returns, stops it and fails the
    test with its verdict when the agent made more, fewer or different model calls than recorded.
    """
    state: _State = request.config.stash[_STATE]
    item = request.node
    script = state.script_path(item)
    try:
        replay = state.start_replay(script)
    except AtifError as err:
        failure = str(err)
    else:
        failure = None
    if failure is not None:
        pytest.fail(failure, pytrace=False)
    item.stash[_REPLAY] = replay
    with pytest.MonkeyPatch.context() as env:
        for name, value in replay.environment(state.dummy_keys).items():
            env.setenv(name, value)
        try:
            yield replay
        finally:
            replay._server.stop()


@pytest.fixture
def atif_golden(request: pytest.FixtureRequest):
    """Compares a trajectory with this test's golden file through ``atif check``.

    Call it with no argument for the trajectory captured from the test's model traffic (needs
    ``atif_replay``), or with a trajectory as a dict or a path; ``name=`` tells several goldens of
    one test apart. The golden is ``<atif_golden_dir>/<module>__<test>[__<name>].json``.
    """
    return AtifGolden(request)


@pytest.fixture
def atif_otel(request: pytest.FixtureRequest):
    """Collects the test's OpenTelemetry spans in memory, for ``atif_golden`` to check.

    Instrument the framework with ``atif_otel.tracer_provider``; ``atif_golden()`` with no
    argument then checks the trajectory of the spans (``atif import --from otel``, the ``otel``
    preset applied) against the test's golden. Needs ``opentelemetry-sdk`` and
    ``opentelemetry-exporter-otlp-proto-common``.
    """
    __tracebackhide__ = True
    state: _State = request.config.stash[_STATE]
    try:
        collector = AtifOtel(state.binary())
    except AtifError as err:
        pytest.fail(str(err), pytrace=False)
    yield collector
    collector.close()


@dataclass
class AtifReplay:
    """The value of the ``atif_replay`` fixture: the server of one test."""

    url: str
    """The server's origin, e.g. ``http://127.0.0.1:41234`` (OpenAI clients add ``/v1``)."""
    script: Path
    """The script this test replays (or records)."""
    recording: bool
    """True under ``--atif-record``."""
    _server: Server = field(repr=False)
    _upstream: Optional[str] = field(default=None, repr=False)

    def trajectory(self) -> dict:
        """The ATIF trajectory captured from this test's model traffic so far, as a dict."""
        __tracebackhide__ = True
        try:
            return self._server.trajectory()
        except AtifError as err:
            failure = str(err)
        pytest.fail(failure, pytrace=False)

    def environment(self, dummy_keys: bool) -> dict:
        """The variables that point each provider's SDK at the server."""
        env = {
            "OPENAI_BASE_URL": f"{self.url}/v1",
            "OPENAI_API_BASE": f"{self.url}/v1",
            "ANTHROPIC_BASE_URL": self.url,
            "GOOGLE_GEMINI_BASE_URL": self.url,
            "GEMINI_API_BASE_URL": self.url,
            "ATIF_PROXY_URL": self.url,
            "ATIF_PROXY_TOKEN": self._server.token,
        }
        if dummy_keys and (not self.recording or self._upstream):
            for key in _DUMMY_KEYS:
                if not os.environ.get(key):
                    env[key] = "atif-replay-dummy-key"
        return env


class AtifGolden:
    """The value of the ``atif_golden`` fixture: call it to compare a trajectory with its golden."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._checked: set[Path] = set()

    def __call__(
        self,
        trajectory: Union[None, dict, str, os.PathLike] = None,
        *,
        name: Optional[str] = None,
        preset: Optional[str] = None,
        token_tolerance: Optional[float] = None,
        compare_content: Optional[bool] = None,
        volatile: Union[None, str, list, tuple] = None,
        selectors: Union[None, str, list, tuple] = None,
        masks: Union[None, str, list, tuple] = None,
        keep_subagent_order: Optional[bool] = None,
        secret_patterns: Union[None, str, list, tuple] = None,
        max_input_bytes: Union[None, int, str] = None,
        sequence: Optional[str] = None,
        arguments: Optional[str] = None,
        arguments_for: Union[None, str, list, tuple] = None,
        number_tolerance: Optional[float] = None,
        step_band: Union[None, int, str] = None,
        llm_calls_band: Union[None, int, str] = None,
        token_band: Union[None, int, str] = None,
    ) -> None:
        """Compares ``trajectory`` (default: the captured one) with the golden; fails the test on a change.

        The keywords after ``name`` are `atif check`'s comparison flags; each one given replaces
        its ini option (``atif_<keyword>``; ``atif_golden_masks`` for ``masks``) for this check.
        """
        __tracebackhide__ = True
        try:
            state: _State = self._request.config.stash[_STATE]
            options = state.golden_options().overridden(
                preset=preset,
                token_tolerance=token_tolerance,
                compare_content=compare_content,
                volatile=volatile,
                selectors=selectors,
                masks=masks,
                keep_subagent_order=keep_subagent_order,
                secret_patterns=secret_patterns,
                max_input_bytes=max_input_bytes,
                sequence=sequence,
                arguments=arguments,
                arguments_for=arguments_for,
                number_tolerance=number_tolerance,
                step_band=step_band,
                llm_calls_band=llm_calls_band,
                token_band=token_band,
            )
            outcome = self._check(trajectory, name, options)
        except AtifError as err:
            outcome = str(err)
        if outcome is not None:
            pytest.fail(outcome, pytrace=False)

    def _check(
        self, trajectory: Union[None, dict, str, os.PathLike], name: Optional[str], options: GoldenOptions
    ) -> Optional[str]:
        request = self._request
        state: _State = request.config.stash[_STATE]
        item = request.node
        golden = state.golden_path(item, name)
        if golden in self._checked:
            raise AtifError(state.claimed_message(golden, item.nodeid))
        self._checked.add(golden)
        state.claim(golden, item.nodeid)
        scratch = state.scratch(request.getfixturevalue("tmp_path_factory"))
        captured = trajectory is None and self._captured_by_replay()
        if captured:
            request.getfixturevalue("atif_replay")._server.check_running()
        actual = scratch / f"{golden.stem}.json" if captured else self._actual(trajectory, golden, scratch)
        outcome = check(
            state.harness(),
            golden,
            actual,
            update=state.update,
            update_command=state.pytest_command("--atif-update", item),
            cwd=state.cwd,
            options=options,
            captured=captured,
            scratch=scratch,
        )
        # pytest's --junitxml holds them as properties of this test case (record_property).
        if outcome.properties:
            request.node.user_properties.append(("atif.golden", _shown(golden, state.cwd)))
        for name, value in outcome.properties:
            request.node.user_properties.append((f"atif.{name}", value))
        if outcome.matched:
            # Name what the run wrote (`created golden …`, `changed golden …`), not what matched.
            if outcome.report.startswith(("created", "changed")):
                state.golden_lines.append(outcome.report.splitlines()[0])
            return None
        if outcome.pending:
            state.pending.append(golden)
            if state.has_golden_review():
                review = f"atif golden review --dir {_shown(golden.parent, state.cwd)}"
                return f"{outcome.report}\nreview pending goldens with: {review}"
        return outcome.report

    def _captured_by_replay(self) -> bool:
        """Whether a check without a trajectory is of the one the test's replay server captured
        (the harness writes it for the check itself, in the same request)."""
        request = self._request
        return "atif_otel" not in request.fixturenames and "atif_replay" in request.fixturenames

    def _actual(self, trajectory: Any, golden: Path, scratch: Path) -> Path:
        request = self._request
        if trajectory is None and "atif_otel" in request.fixturenames:
            trajectory = request.getfixturevalue("atif_otel").trajectory()
        if trajectory is None:
            raise AtifError(
                "atif_golden() without a trajectory compares the one captured from the "
                "test's model traffic (the atif_replay fixture) or from its spans (atif_otel): "
                "add one of them to the test's arguments, or pass a trajectory (a dict or a path)"
            )
        if isinstance(trajectory, dict):
            path = scratch / f"{golden.stem}.json"
            path.write_text(json.dumps(trajectory, ensure_ascii=False), encoding="utf-8")
            return path
        if isinstance(trajectory, (str, os.PathLike)):
            path = Path(trajectory)
            if not path.is_file():
                raise AtifError(f"the trajectory file {path} does not exist (atif_golden was given it)")
            return path.resolve()
        raise AtifError(
            f"atif_golden() takes a trajectory as a dict, a path or nothing (the captured one), "
            f"not a {type(trajectory).__name__}"
        )


class _State:
    """The session's settings and what it did, for the summary."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.cwd = Path(config.invocation_params.dir).resolve()
        root = Path(config.rootpath).resolve()
        self.script_dir = root / config.getini("atif_script_dir")
        self.golden_dir = root / config.getini("atif_golden_dir")
        self.record = bool(config.getoption("--atif-record"))
        self.upstream = config.getoption("--atif-upstream")
        self.listen = config.getoption("--atif-listen")
        self.drift = config.getoption("--atif-drift")
        self.masks = tuple(config.getini("atif_masks"))
        self.update = bool(config.getoption("--atif-update"))
        self.dummy_keys = True
        self.recorded: list[Path] = []
        self.golden_lines: list[str] = []
        self.pending: list[Path] = []
        self._claims: dict[Path, str] = {}
        self._binary: Optional[str] = None
        self._golden_review: Optional[bool] = None
        self._golden_options: Optional[GoldenOptions] = None
        self._harness: Optional[Harness] = None
        self._scratch: Optional[Path] = None

    def golden_options(self) -> GoldenOptions:
        """The ini options of `atif_golden`, read once; keywords of a call replace them."""
        if self._golden_options is None:
            ini = self.config.getini
            tolerance = (ini("atif_token_tolerance") or "").strip() or None
            self._golden_options = GoldenOptions().overridden(
                preset=(ini("atif_preset") or "").strip() or None,
                token_tolerance=tolerance,
                compare_content=ini("atif_compare_content"),
                volatile=ini("atif_volatile"),
                selectors=ini("atif_selectors"),
                masks=ini("atif_golden_masks"),
                keep_subagent_order=ini("atif_keep_subagent_order"),
                secret_patterns=ini("atif_secret_patterns"),
                max_input_bytes=(ini("atif_max_input_bytes") or "").strip() or None,
                sequence=(ini("atif_sequence") or "").strip() or None,
                arguments=(ini("atif_arguments") or "").strip() or None,
                arguments_for=ini("atif_arguments_for"),
                number_tolerance=(ini("atif_number_tolerance") or "").strip() or None,
                step_band=(ini("atif_step_band") or "").strip() or None,
                llm_calls_band=(ini("atif_llm_calls_band") or "").strip() or None,
                token_band=(ini("atif_token_band") or "").strip() or None,
            )
        return self._golden_options

    def scratch(self, factory: pytest.TempPathFactory) -> Path:
        """The session's folder for the trajectories it checks and the checks' JUnit files,
        under pytest's base temporary folder (kept for a look after the run, as pytest keeps it)."""
        if self._scratch is None:
            self._scratch = factory.mktemp("atif-actual")
        return self._scratch

    def harness(self) -> Harness:
        """The session's `atif harness`, started at its first use; stopped at the session's end."""
        if self._harness is None:
            self._harness = Harness(self.binary(), self.cwd)
        return self._harness

    def close(self) -> None:
        if self._harness is not None:
            self._harness.close()
            self._harness = None

    def binary(self) -> str:
        if self._binary is None:
            self._binary = find_atif()
        return self._binary

    def has_golden_review(self) -> bool:
        """Whether this `atif` has `atif golden review` (older binaries have only `atif check`)."""
        if self._golden_review is None:
            try:
                done = subprocess.run(
                    [self.binary(), "golden", "review", "--help"],
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=False,
                )
            except (OSError, AtifError):
                self._golden_review = False
            else:
                self._golden_review = done.returncode == 0
        return self._golden_review

    def script_path(self, item: pytest.Item) -> Path:
        marker = item.get_closest_marker("atif_script")
        if marker is not None and marker.args:
            named = Path(marker.args[0])
            return named if named.is_absolute() else Path(self.config.rootpath) / named
        return self.script_dir / f"{base_name(item.path, item.nodeid)}.json"

    def golden_path(self, item: pytest.Item, name: Optional[str]) -> Path:
        base = base_name(item.path, item.nodeid)
        if name is not None:
            base = f"{base}__{sanitize(name)}"
        return self.golden_dir / f"{base}.json"

    def claim(self, golden: Path, nodeid: str) -> None:
        """Fails when two checks of this session resolve to one golden file."""
        owner = self._claims.setdefault(golden, nodeid)
        if owner != nodeid:
            raise AtifError(self.claimed_message(golden, owner))

    def claimed_message(self, golden: Path, owner: str) -> str:
        return (
            f"the golden {_shown(golden, self.cwd)} is already checked by {owner}; "
            'give this check its own name: atif_golden(..., name="...")'
        )

    def start_replay(self, script: Path) -> AtifReplay:
        if script.is_dir():
            raise AtifError(f"the replay script {_shown(script, self.cwd)} is a directory, not a script file")
        if not self.record and not script.is_file():
            raise AtifError(
                f"the replay script {_shown(script, self.cwd)} does not exist: record it with "
                "`pytest --atif-record` (add `--atif-upstream URL` to record from a local "
                "provider) and commit it"
            )
        if self.record:
            script.parent.mkdir(parents=True, exist_ok=True)
        server = Server(
            self.harness(),
            script,
            record=self.record,
            upstream=self.upstream,
            listen=self.listen,
            drift=self.drift,
            masks=self.masks,
            shown=_shown(script, self.cwd),
        )
        return AtifReplay(server.url, script, self.record, server, self.upstream)

    def pytest_command(self, flag: str, item: pytest.Item) -> str:
        """``pytest FLAG <this test>``, with the test named from where pytest was run."""
        _, _, rest = item.nodeid.partition("::")
        target = _shown(Path(item.path), self.cwd)
        nodeid = f"{target}::{rest}" if rest else target
        return f"pytest {flag} {shlex.quote(nodeid)}"


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _fail_report(report: pytest.TestReport, message: str) -> None:
    """Makes a passing report fail with ``message``, or adds it to a failing one's report."""
    if report.passed:
        report.outcome = "failed"
        report.longrepr = message
    else:
        report.sections.append(("atif replay verdict", message))


def _refused_by_server(error: BaseException, stderr: str) -> bool:
    """Whether ``error`` (or an exception it was raised from) carries a refusal of the server.

    The server answers a request it cannot match with a 4xx whose message is the failure it
    also lists in its verdict (`- request #1 to ... matches no ...`); an SDK puts that message in
    the exception it raises, so finding it there ties the exception to the server.
    """
    refusals = [line[2:82] for line in stderr.splitlines() if line.startswith("- ") and len(line) > 12]
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        text = str(error)
        if any(refusal in text for refusal in refusals):
            return True
        error = error.__cause__ or error.__context__
    return False


def _user_frames(excinfo: pytest.ExceptionInfo, cwd: Path) -> str:
    """The traceback in pytest's short style, without the frames of installed packages.

    What remains is the test's own code down to the call into the SDK; the exception is named
    on one line, since its message is the server's, which the verdict below gives in full.
    """
    lines: list[str] = []
    hidden: list[str] = []
    for entry in excinfo.traceback:
        path = Path(str(entry.path))
        package = _installed_package(path)
        if package is not None:
            # Frames before the first of the test's own are pytest's, never shown anyway.
            if lines:
                hidden.append(package)
            continue
        lines.append(f"{_shown(path, cwd)}:{entry.lineno + 1}: in {entry.name}")
        try:
            statement = str(entry.statement).strip()
        except Exception:  # noqa: BLE001 (a source that cannot be read is only left out)
            statement = ""
        lines += [f"    {line}" for line in statement.splitlines()]
    error = excinfo.type
    module = "" if error.__module__ == "builtins" else f"{error.__module__}."
    where = ""
    if hidden:
        packages = ", ".join(dict.fromkeys(hidden))
        where = f" in {packages} ({len(hidden)} frame(s) hidden; pytest --fulltrace shows them)"
    lines.append(f"E   {module}{error.__qualname__} raised{where}: the replay server refused a request")
    return "\n".join(lines)


def _installed_package(path: Path) -> Optional[str]:
    """The top-level package an installed file belongs to (site-packages or the standard library)."""
    try:
        path = path.resolve()
    except (OSError, RuntimeError):
        return None
    for root in _LIBRARY_ROOTS:
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            continue
        if parts and parts[0] in ("site-packages", "dist-packages"):
            parts = parts[1:]
        if parts:
            return parts[0].removesuffix(".py")
    return None


def _library_roots() -> tuple[Path, ...]:
    """Where installed packages and the standard library live, most specific first."""
    paths = sysconfig.get_paths()
    roots = [paths.get(key) for key in ("purelib", "platlib")]
    roots += list(getattr(site, "getsitepackages", lambda: [])())
    user = getattr(site, "getusersitepackages", lambda: None)()
    roots += [user, paths.get("stdlib"), paths.get("platstdlib")]
    unique = dict.fromkeys(Path(root).resolve() for root in roots if root)
    return tuple(sorted(unique, key=lambda root: len(root.parts), reverse=True))


_LIBRARY_ROOTS = _library_roots()


def _replay_failure(script: str, verdict: Verdict, update: str) -> str:
    if verdict.exit_code == 1:
        heading = f"the replay of {script} was not exact: the agent's model calls differ from the recording"
        fix = f"if this change is intended, re-record the script: {update}"
        details = _summary(verdict.message)
    else:
        heading = f"atif serve failed while replaying {script} (exit {verdict.exit_code})"
        fix = ""
        details = verdict.message.rstrip()
    return "\n".join(part for part in (heading, details, fix) if part)


def _summary(stderr: str) -> str:
    """The server's closing verdict, without the per-request lines it repeats."""
    lines = stderr.rstrip().splitlines()
    for index in range(len(lines) - 1, -1, -1):
        if _VERDICT_LINE.match(lines[index]):
            return "\n".join(lines[index:])
    return stderr.rstrip()


def _warnings(stderr: str) -> str:
    """What the server printed besides its closing verdict (drift served under `--drift warn`)."""
    lines = [line for line in stderr.rstrip().splitlines() if not _VERDICT_LINE.match(line)]
    return "\n".join(lines)


def _record_failure(script: str, verdict: Verdict) -> str:
    return (
        f"recording {script} failed (atif serve exit {verdict.exit_code}):\n"
        f"{verdict.message.rstrip() or '(it printed nothing)'}"
    )


# The first line of `atif serve`'s closing verdict on stderr, e.g. `atif replay: replay not exact:`.
_VERDICT_LINE = re.compile(r"^atif \w+: (replay|recording)( not)? exact")
_STATE = pytest.StashKey[_State]()
_REPLAY = pytest.StashKey[AtifReplay]()
