"""The plugin's own tests run inner pytest sessions through pytester, with the real `atif`."""

import os
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner sessions decide CI, golden mode and provider variables themselves, not the caller."""
    for name in (
        "CI",
        "ATIF_GOLDEN",
        "ATIF_GOLDEN_REPORT",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def fake_provider_url():
    """The URL of a running `atif-fake-provider` (the workspace's scripted fake model server).

    Found at ``$ATIF_FAKE_PROVIDER`` or in the workspace's ``target/debug``; where it is absent the
    test is skipped with the command that builds it, unless ``ATIF_E2E_REQUIRED=1`` (as on CI).
    """
    binary = os.environ.get("ATIF_FAKE_PROVIDER") or str(
        Path(__file__).resolve().parents[2] / "target" / "debug" / "atif-fake-provider"
    )
    if not Path(binary).is_file():
        message = f"skipped: {binary} not found; build it with `cargo build -p atif-fake-provider`"
        if os.environ.get("ATIF_E2E_REQUIRED") == "1":
            pytest.fail(message.replace("skipped: ", ""), pytrace=False)
        pytest.skip(message)
    process = subprocess.Popen(
        [binary, "--command", "echo $((6 * 7))"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline().strip() if process.stdout else ""
    if not line.startswith("listening on "):
        process.kill()
        pytest.fail(f"{binary} printed {line!r} instead of its address", pytrace=False)
    yield line[len("listening on "):]
    process.kill()
    process.wait()
