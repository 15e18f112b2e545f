"""Comparing a trajectory with its golden file through `atif check`, with its options."""

from __future__ import annotations

import contextlib
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Optional

from atif_pytest._errors import AtifError
from atif_pytest._harness import Harness

# The variable that selects what a check may write, as `atif check` reads it (docs/golden.md).
MODE_ENV = "ATIF_GOLDEN"

# Unicode's White_Space characters: what Rust's `str::trim` removes. Python's `str.strip()`
# also removes U+001C to U+001F, which `atif check` keeps, so the set is spelled out.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def is_ci(value: Optional[str]) -> bool:
    """Whether this value of `CI` means "on CI": set, and not `0`, `false` (any case) or empty.

    The rule of `atif_fs::is_ci`, surrounding white space ignored as Rust's `trim` does.
    """
    if value is None:
        return False
    value = value.strip(_WHITE_SPACE)
    return value not in ("", "0") and _ascii_lower(value) != "false"


def golden_mode(mode: Optional[str], ci: Optional[str]) -> str:
    """The mode `atif check` takes from these values of `ATIF_GOLDEN` and `CI` (None: unset).

    Returns ``"check"``, ``"review"`` or ``"update"``, as `atif_golden::Mode::from_env_values`
    does: white space around the value and ASCII case are ignored, empty means unset, `review`
    and the default only check on CI.

    Raises:
        AtifError: for any other value, with the message `atif check` gives.
    """
    local_default = "check" if is_ci(ci) else "review"
    requested = _ascii_lower((mode or "").strip(_WHITE_SPACE))
    if requested in ("", "auto", "review"):
        return local_default
    if requested in ("check", "update"):
        return requested
    raise AtifError(
        f"unknown {MODE_ENV} value `{mode}`: expected one of auto, check, review, update (or unset)"
    )


@dataclass(frozen=True)
class GoldenOptions:
    """How a run is compared with its golden: the comparison flags of `atif check`.

    Each field is a keyword of the ``atif_golden`` fixture and an ini option ``atif_<field>``
    (``atif_golden_masks`` for ``masks``, whose plain name is the server's request masks).
    ``None`` and empty mean the flag is not given, so `atif check`'s default holds.
    """

    preset: Optional[str] = None
    token_tolerance: Optional[float] = None
    compare_content: bool = True
    volatile: tuple[str, ...] = ()
    selectors: tuple[str, ...] = ()
    masks: tuple[str, ...] = ()
    keep_subagent_order: bool = False
    secret_patterns: tuple[str, ...] = ()
    max_input_bytes: Optional[str] = None
    sequence: Optional[str] = None
    arguments: Optional[str] = None
    arguments_for: tuple[str, ...] = ()
    number_tolerance: Optional[float] = None
    step_band: Optional[str] = None
    llm_calls_band: Optional[str] = None
    token_band: Optional[str] = None

    def overridden(self, **keywords) -> "GoldenOptions":
        """These options with each keyword that is not None replacing its field."""
        given = {name: value for name, value in keywords.items() if value is not None}
        unknown = sorted(set(given) - {field.name for field in fields(self)})
        if unknown:
            raise AtifError(f"atif_golden() got unknown option(s): {', '.join(unknown)}")
        for name in ("volatile", "selectors", "masks", "secret_patterns", "arguments_for"):
            if name in given:
                given[name] = _strings(name, given[name])
        for name in ("token_tolerance", "number_tolerance"):
            if name in given:
                given[name] = _tolerance(name, given[name])
        for name in ("compare_content", "keep_subagent_order"):
            if name in given and not isinstance(given[name], bool):
                raise AtifError(f"atif_golden({name}=...) takes True or False, not {given[name]!r}")
        for name in ("preset", "max_input_bytes", "sequence", "arguments", "step_band", "llm_calls_band", "token_band"):
            if name in given:
                given[name] = str(given[name])
        return replace(self, **given)

    def args(self) -> list[str]:
        """The `atif check` flags of these options."""
        args: list[str] = []
        if self.preset:
            args += ["--preset", self.preset]
        if self.token_tolerance is not None:
            args += ["--token-tolerance", repr(self.token_tolerance)]
        if not self.compare_content:
            args.append("--no-content")
        for flag, values in (
            ("--volatile", self.volatile),
            ("--selector", self.selectors),
            ("--mask", self.masks),
            ("--secret-pattern", self.secret_patterns),
        ):
            for value in values:
                args += [flag, value]
        if self.keep_subagent_order:
            args.append("--keep-subagent-order")
        if self.max_input_bytes:
            args += ["--max-input-bytes", self.max_input_bytes]
        if self.number_tolerance is not None:
            args += ["--number-tolerance", repr(self.number_tolerance)]
        for flag, value in (
            ("--sequence", self.sequence),
            ("--arguments", self.arguments),
            ("--step-band", self.step_band),
            ("--llm-calls-band", self.llm_calls_band),
            ("--token-band", self.token_band),
        ):
            if value:
                args += [flag, value]
        for value in self.arguments_for:
            args += ["--arguments-for", value]
        return args


@dataclass(frozen=True)
class CheckOutcome:
    """What `atif check` said: `matched` is False on a behaviour change or a missing golden."""

    matched: bool
    report: str
    pending: bool
    # The check's JUnit properties, as `atif check --junit` writes them: `verdict`, and one
    # `delta.FIELD` per Shape delta (the report's line for it).
    properties: tuple[tuple[str, str], ...] = field(default=())


def check(
    harness: Harness,
    golden: Path,
    actual: Path,
    *,
    update: bool,
    update_command: str,
    cwd: Path,
    options: GoldenOptions = GoldenOptions(),
    captured: bool = False,
    scratch: Optional[Path] = None,
) -> CheckOutcome:
    """Runs the command line ``atif check GOLDEN ACTUAL`` in the session's harness, and reads its
    exit status (0 matched, 1 changed, 2 error).

    ``update_command`` is the command the failure message names to accept a change; ``cwd``,
    the harness's working directory, is where paths in the message are shown relative to.
    With ``captured``, the harness first writes the trajectory its running server captured to
    ``actual``: the check of the test's own run is one request. ``scratch`` is a folder of the
    session for the check's JUnit file (a temporary one when None).

    Raises:
        AtifError: when `atif check` could not run (exit 2), with its message.
    """
    args = ["atif", "check", _shown(golden, cwd), str(actual), "--update-command", update_command]
    args += options.args()
    if update:
        args.append("--update")
    # The deltas as properties come from the check's own JUnit file, so the plugin's JUnit
    # (pytest's --junitxml) and `atif check --junit` say the same.
    with contextlib.ExitStack() as stack:
        if scratch is None:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="atif-junit-")))
        junit = scratch / "check.xml"
        # A check that stops before its verdict writes no file: never read the last one's.
        junit.unlink(missing_ok=True)
        message = {"op": "check", "args": args + ["--junit", str(junit)]}
        if captured:
            message["captured"] = str(actual)
        done = harness.request(message)
        properties = _junit_properties(junit)
    code = done.get("code")
    stdout = str(done.get("stdout", "")).rstrip()
    stderr = str(done.get("stderr", "")).rstrip()
    if code == 0:
        return CheckOutcome(True, stdout, pending=False, properties=properties)
    if code == 1:
        report = "\n".join(text for text in (stdout, stderr) if text)
        pending = "\npending: " in f"\n{report}"
        return CheckOutcome(False, report, pending=pending, properties=properties)
    raise AtifError(
        f"atif check could not compare with the golden {_shown(golden, cwd)} "
        f"(exit {code}):\n{stderr or stdout or '(it printed nothing)'}"
    )


def _junit_properties(path: Path) -> tuple[tuple[str, str], ...]:
    """The properties of the one test case of an `atif check --junit` file; none when the check
    wrote no file (it stopped before a verdict)."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return ()
    return tuple(
        (str(prop.get("name", "")), str(prop.get("value", ""))) for prop in root.iter("property")
    )


def _ascii_lower(text: str) -> str:
    """Lower case for ASCII letters only, as Rust's `to_ascii_lowercase`."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _strings(name: str, value) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    try:
        items = tuple(value)
    except TypeError:
        items = None
    if items is None or not all(isinstance(item, str) for item in items):
        raise AtifError(f"atif_golden({name}=...) takes a string or a list of strings, not {value!r}")
    return items


def _tolerance(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise AtifError(f"atif_golden({name}=...) takes a number such as 0.1, not {value!r}")
    try:
        return float(value)
    except ValueError:
        raise AtifError(f"{name} takes a number such as 0.1, not {value!r}") from None


def _shown(path: Path, cwd: Path) -> str:
    """The path relative to ``cwd`` when it is inside it, so messages stay short."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


