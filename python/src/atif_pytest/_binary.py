"""Finding the `atif` binary the wheel installed."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from atif_pytest._errors import AtifError

_EXE = "atif.exe" if sys.platform == "win32" else "atif"


def find_atif() -> str:
    """Returns the path of the `atif` binary to run.

    Looks, in order, at ``$ATIF_BIN``, at the scripts folder of the running interpreter (where
    ``pip install`` put it, found even when the virtual environment is not activated), and on
    ``PATH``.

    Raises:
        AtifError: when ``$ATIF_BIN`` names no executable file, or no binary was found.
    """
    named = os.environ.get("ATIF_BIN")
    if named:
        if _is_executable(Path(named)):
            return named
        raise AtifError(
            f"ATIF_BIN is set to {named}, which is not an executable file: "
            "point it at the `atif` binary, or unset it to use the one `pip install` put beside "
            "this Python"
        )
    scripts = Path(sysconfig.get_path("scripts")) / _EXE
    if _is_executable(scripts):
        return str(scripts)
    on_path = shutil.which("atif")
    if on_path:
        return on_path
    raise AtifError(
        f"the `atif` command was not found (looked at $ATIF_BIN, {scripts} and PATH): "
        "install it into this environment with `pip install atif` (or `pip install ./python` "
        "from a checkout), or set ATIF_BIN to the binary"
    )


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)
