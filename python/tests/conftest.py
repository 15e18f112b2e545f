"""The plugin's own tests run inner pytest sessions through pytester, with the real `atif`."""

import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner sessions decide CI, golden mode and provider variables themselves, not the caller."""
    for name in (
        "CI",
        "ATIF_GOLDEN",
        "ATIF_GOLDEN_LOG",
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


def _e2e_cache() -> Path:
    """``$ATIF_E2E_CACHE``, or ``target/e2e-cache`` in the workspace (as ``tests::e2e``)."""
    cache = os.environ.get("ATIF_E2E_CACHE")
    return Path(cache) if cache else Path(__file__).resolve().parents[2] / "target" / "e2e-cache"


class RealModel:
    """A running real model server: its ``url``, and ``stop()``, which ends its process."""

    def __init__(self, url: str, process: subprocess.Popen):
        self.url = url
        self._process = process

    def stop(self) -> None:
        self._process.kill()
        self._process.wait()


@pytest.fixture
def real_model():
    """A real model: Gemma 3 270M on llama-cpp-python's server, which
    ``cargo xtask e2e-setup`` installs into the end-to-end cache's ``model-venv`` (issue 29).

    The server listens on a free loopback port, with tool calls (``chatml-function-calling``)
    and a fixed ``--seed``, so a fresh server fed the same requests answers the same. It is
    this fixture's own process, stopped when the test ends. Where the model is not installed
    the test is skipped naming the setup command, unless ``ATIF_E2E_REQUIRED=1`` (as on CI).
    """
    cache = _e2e_cache()
    python = cache / "model-venv" / "bin" / "python"
    stamp = cache / "model-venv" / ".atif-model-requirements.txt"
    model = cache / "models" / "gemma-3-270m-q4_k_m.gguf"
    for path in (python, stamp, model):
        if not path.exists():
            message = f"skipped: the real model is not installed (no {path}); run `cargo xtask e2e-setup`"
            if os.environ.get("ATIF_E2E_REQUIRED") == "1":
                pytest.fail(message.replace("skipped: ", ""), pytrace=False)
            pytest.skip(message)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [str(python), "-m", "llama_cpp.server", "--model", str(model),
         "--chat_format", "chatml-function-calling", "--host", "127.0.0.1",
         "--port", str(port), "--seed", "42"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                log.seek(0)
                pytest.fail(f"the real model's server exited ({process.returncode}):\n{log.read().decode(errors='replace')}", pytrace=False)
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=5) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the real model's server did not answer /v1/models in 120 s", pytrace=False)
            time.sleep(0.1)
        yield RealModel(url, process)
    finally:
        process.kill()
        process.wait()
        log.close()
