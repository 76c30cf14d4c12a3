"""Start an OpenAI-compatible model server on a model folder, and stop it.

The comparison pipeline serves each saved policy folder this way when
``policy.server_command`` is set (see :class:`agents.ServedModel`), e.g. with
``vllm serve {model} --port {port}`` on a GPU box or ``transformers serve {model} --port
{port}`` anywhere::

    with ModelServer("vllm serve {model} --port {port}", "runs/q/methods/rft/model/policy") as s:
        client = ChatClient(s.base_url, s.model)
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["ModelServer", "check_server_command"]

logger = logging.getLogger(__name__)

_LOG_TAIL_CHARS = 2000
_FIELDS = ("{model}", "{port}")
# What torchrun / accelerate set for this process's group: a server (vLLM) that read them
# would try to join our process group instead of starting its own.
_LAUNCHER_VARIABLES = frozenset(
    {
        "RANK",
        "LOCAL_RANK",
        "WORLD_SIZE",
        "LOCAL_WORLD_SIZE",
        "GROUP_RANK",
        "ROLE_RANK",
        "ROLE_WORLD_SIZE",
        "GROUP_WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
    }
)


class ModelServer:
    """Runs a command that serves a model over HTTP until the block ends.

    The command is a template: ``{model}`` becomes the model (a saved policy folder or a
    hub id), ``{port}`` a free port chosen here and ``{device}`` the ``device`` given
    (e.g. ``"vllm serve {model} --port {port}"``, ``"transformers serve {model} --port
    {port} --device cuda:{device}"``). The server is ready when
    ``/health`` or ``/v1/models`` answers; its output goes to a log file whose end is
    shown if it exits early. Leaving the block stops it (and its children).

    Args:
        command: The command template; it must contain ``{model}`` and ``{port}``.
        model: What to serve; requests name it as the model.
        host: Where the server listens (the command must listen there; both vLLM and
            ``transformers serve`` take ``--host``, default localhost).
        startup_timeout_s: Longest wait for the server to answer.
        log_path: Where its output goes (default: a temporary file).
        device: What ``{device}`` becomes (e.g. this process's local GPU index).

    Attributes:
        base_url: The API root, ``http://HOST:PORT/v1`` (set once started).
        model: What it serves.
        log_path: Its output.

    Raises:
        ValueError: If the template lacks ``{model}`` or ``{port}``, or is not a command.

    """

    def __init__(
        self,
        command: str,
        model: str,
        *,
        host: str = "127.0.0.1",
        startup_timeout_s: float = 600.0,
        log_path: str | Path | None = None,
        device: int | str = 0,
    ):
        check_server_command(command)
        self.command = command
        self.model = str(model)
        self.host = host
        self.startup_timeout_s = float(startup_timeout_s)
        self.log_path = Path(log_path) if log_path is not None else None
        self.device = device
        self.base_url = ""
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the server and wait until it answers.

        Raises:
            RuntimeError: If the command exits, or does not answer within
                ``startup_timeout_s`` (the message ends with its output's last lines).
            FileNotFoundError: If the command's program does not exist.

        """
        port = _free_port(self.host)
        argv = [
            part.format(model=self.model, port=port, host=self.host, device=self.device)
            for part in shlex.split(self.command)
        ]
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="sweetrl-server-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:
            # A session of its own: stop() ends the server's children too (vLLM's workers).
            self._process = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=_server_environment(),
            )
        root = f"http://{self.host}:{port}"
        logger.info("starting %s (log: %s)", shlex.join(argv), self.log_path)
        deadline = time.monotonic() + self.startup_timeout_s
        while not _answers(f"{root}/health") and not _answers(f"{root}/v1/models"):
            if self._process.poll() is not None:
                code = self._process.returncode
                self._process = None
                raise RuntimeError(
                    f"the model server exited with code {code} before answering: "
                    f"{shlex.join(argv)}\n{self._log_tail()}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the model server did not answer within {self.startup_timeout_s:g}s: "
                    f"{shlex.join(argv)}\n{self._log_tail()}"
                )
            time.sleep(0.25)
        self.base_url = f"{root}/v1"

    def stop(self) -> None:
        """Stop the server and its children (a no-op if it is not running)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:
            pass

    def _log_tail(self) -> str:
        try:
            text = self.log_path.read_text(errors="replace") if self.log_path else ""
        except OSError:
            return ""
        return text[-_LOG_TAIL_CHARS:]


def check_server_command(command: Any) -> str:
    """Return ``command`` if it is a usable :class:`ModelServer` template.

    Raises:
        ValueError: Saying what is missing.

    """
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"the server command must be a non-empty str, got {command!r}")
    try:
        shlex.split(command)
    except ValueError as err:
        raise ValueError(f"the server command {command!r} does not parse: {err}") from None
    for field in _FIELDS:
        if field not in command:
            raise ValueError(
                f"the server command {command!r} needs {field} (e.g. 'vllm serve {{model}} "
                "--port {port}')"
            )
    return command


def _server_environment() -> dict[str, str]:
    """Return this process's environment without the launcher's process-group variables."""
    return {
        key: value
        for key, value in os.environ.items()
        if key not in _LAUNCHER_VARIABLES and not key.startswith("TORCHELASTIC_")
    }


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _answers(url: str) -> bool:
    """Whether ``url`` answers HTTP 200 (the server is up and ready)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
    try:
        with opener.open(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False
