"""File names for a test's script and golden, stable per test and per parametrisation."""

from __future__ import annotations

import re
from pathlib import Path

_OUTSIDE_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_PARAMETRISED = re.compile(r"^(?P<name>[^\[]*)\[(?P<case>.*)\]$")


def sanitize(part: str) -> str:
    """Makes one part of a name safe as a file name, the way the Rust golden names are made.

    Every run of characters outside ``[A-Za-z0-9_.-]`` becomes ``_``, and ``..`` or a leading
    dot become ``_`` too, so no name can leave its folder.
    """
    safe = _OUTSIDE_SAFE.sub("_", part).replace("..", "_")
    if safe.startswith("."):
        safe = "_" + safe[1:]
    return safe or "_"


def base_name(path: Path, nodeid: str) -> str:
    """The base name of a test's files: ``<module>__<test>``.

    The module is the test file's stem; the test part is the node id after the file, with
    classes kept (``<module>__<Class>__<test>``) and a parametrisation's id as a last part
    (``test_x[paris-oslo]`` becomes ``test_x__paris-oslo``), so every case has its own files.
    """
    parts = [path.stem]
    for part in nodeid.split("::")[1:]:
        parametrised = _PARAMETRISED.match(part)
        if parametrised:
            parts.append(parametrised.group("name"))
            parts.append(parametrised.group("case"))
        else:
            parts.append(part)
    return "__".join(sanitize(part) for part in parts)
