"""Running code in sandbox children: the zygote client and the deadline event loop.

Every child either finishes its execution or moves it forward by at least one call before
it is replaced, so a hostile child (forged records, closed pipes, endless loops) cannot
keep an execution alive for longer than its calls' time limits.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweetrl_gym.sandbox.codec import decode
from sweetrl_gym.sandbox.compare import RaisedException

__all__ = ["Execution", "ExecutionSpec", "Outcome", "SandboxError", "Zygote", "execute"]

_WORKER = Path(__file__).with_name("_worker.py")
_STARTUP_GRACE_S = 0.5  # fork + lock-down before the module's own time limit starts
_MAX_LINE = 8 << 20  # a result line longer than this is "output too large"
_READ_CHUNK = 1 << 16


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the code under test)."""


@dataclass(frozen=True)
class Outcome:
    """What one call produced.

    Attributes:
        kind: ``"value"``, ``"raise"``, ``"timeout"``, ``"crashed"``, ``"too_large"``,
            ``"invalid"`` (the call expression does not compile) or ``"unreadable"``.
        value: The decoded value (``"value"``), a :class:`RaisedException` (``"raise"``)
            or a short message.

    """

    kind: str
    value: Any = None


@dataclass(frozen=True)
class ExecutionSpec:
    """Code to execute, then call expressions to evaluate in it.

    Attributes:
        scope: ``"module"``: the code runs once as a module and every call is evaluated
            in its namespace. ``"function"``: the official evaluator's semantics, the
            code executed afresh inside a function scope for each call (see
            :mod:`sweetrl_gym.sandbox.scoring`).

    """

    code: str
    calls: tuple[str, ...]
    timeout_s: float
    memory_mb: int
    scope: str = "module"


@dataclass
class Execution:
    """Result of an :class:`ExecutionSpec`.

    Attributes:
        module_error: Why executing the code itself failed (a :class:`RaisedException`,
            or ``"timeout"`` / ``"crashed"`` / ``"unreadable"``), else ``None``.
        outcomes: One :class:`Outcome` per call (all failed when the module failed).
        seccomp: Whether the children ran under the seccomp filter.

    """

    module_error: RaisedException | str | None = None
    outcomes: list[Outcome | None] = field(default_factory=list)
    seccomp: bool | None = None


class Zygote:
    """A warm worker process that forks sandbox children on request."""

    def __init__(self) -> None:
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Not `python -I`: it would ignore PYTHONHASHSEED. The user's PYTHON* settings
        # (PYTHONPATH, PYTHONSTARTUP, ...) are dropped instead.
        env = {
            k: v for k, v in os.environ.items() if not k.startswith("PYTHON") or k == "PYTHONHOME"
        }
        # The same hash seed for reference and answer: set iteration order agrees.
        env.update(PYTHONHASHSEED="0", PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1")
        # Numerical libraries must not start thread pools: children cannot make threads.
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        self._proc = subprocess.Popen(
            [sys.executable, "-s", str(_WORKER), str(child_sock.fileno())],
            pass_fds=[child_sock.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches the parent only; the zygote follows it
            env=env,
        )
        child_sock.close()
        parent_sock.settimeout(30)
        self._sock = parent_sock
        self._lock = threading.Lock()
        self.owner_pid = os.getpid()

    @property
    def alive(self) -> bool:
        """Whether the zygote process is running."""
        return self._proc.poll() is None

    def fork(self, job_fd: int, result_fd: int) -> int:
        """Fork a child that reads its job from ``job_fd`` and writes to ``result_fd``."""
        with self._lock:
            try:
                socket.send_fds(self._sock, [b'{"op":"fork"}'], [job_fd, result_fd])
                reply = self._sock.recv(4096)
            except OSError as exc:
                raise SandboxError(f"sandbox worker is not responding: {exc}") from exc
        if not reply:
            raise SandboxError("sandbox worker exited")
        return int(json.loads(reply)["pid"])

    def kill(self, pid: int) -> None:
        """Kill a child if it is still running (no answer is awaited)."""
        with self._lock, contextlib.suppress(OSError):
            self._sock.send(json.dumps({"op": "kill", "pid": pid}).encode())

    def close(self) -> None:
        """Stop the zygote; it kills its remaining children."""
        try:
            self._sock.close()
        finally:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


class _Child:
    def __init__(self, run: _Run, now: float):
        self.run = run
        spec = run.spec
        job = json.dumps(
            {
                "code": spec.code,
                "calls": list(spec.calls),
                "start": run.next,
                "timeout_s": spec.timeout_s,
                "memory_mb": spec.memory_mb,
                "scope": spec.scope,
            }
        ).encode()
        job_r, self.job_fd = os.pipe()
        self.result_fd, result_w = os.pipe()
        try:
            self.pid = run.zygote.fork(job_r, result_w)
        finally:
            os.close(job_r)
            os.close(result_w)
        os.set_blocking(self.job_fd, False)
        os.set_blocking(self.result_fd, False)
        self.job = memoryview(job)
        self.buffer = bytearray()
        self.module_ok = False
        self.deadline = now + spec.timeout_s + _STARTUP_GRACE_S


class _Run:
    def __init__(self, spec: ExecutionSpec, zygote: Zygote):
        self.spec = spec
        self.zygote = zygote
        self.result = Execution(outcomes=[None] * len(spec.calls))
        self.next = 0
        self.child: _Child | None = None

    @property
    def finished(self) -> bool:
        return self.result.module_error is not None or self.next >= len(self.spec.calls)

    def fail_current(self, kind: str, module_kind: str | None = None) -> None:
        """Record that the running child ended badly; move past the call it was on."""
        child = self.child
        if child is not None and not child.module_ok:
            self.result.module_error = module_kind or kind
        elif self.next < len(self.spec.calls):
            self.result.outcomes[self.next] = Outcome(kind)
            self.next += 1


def execute(jobs: Sequence[tuple[ExecutionSpec, Zygote]], max_parallel: int) -> list[Execution]:
    """Run every spec on its zygote, at most ``max_parallel`` children at a time.

    Args:
        jobs: ``(spec, zygote)`` pairs.
        max_parallel: Most children alive at once.

    Returns:
        One :class:`Execution` per job, in order.

    """
    runs = [_Run(spec, zygote) for spec, zygote in jobs]
    selector = selectors.DefaultSelector()
    active: list[_Child] = []
    try:
        while True:
            now = time.monotonic()
            for run in runs:
                if len(active) >= max_parallel:
                    break
                if run.child is None and not run.finished:
                    child = _Child(run, now)
                    run.child = child
                    active.append(child)
                    selector.register(child.result_fd, selectors.EVENT_READ, child)
                    selector.register(child.job_fd, selectors.EVENT_WRITE, child)
            if not active:
                break
            timeout = max(0.0, min(c.deadline for c in active) - time.monotonic())
            for key, _ in selector.select(timeout):
                child = key.data
                if child.run.child is not child:
                    continue  # ended earlier in this batch of events
                if key.fd == child.job_fd:
                    _send_job(selector, child)
                else:
                    _receive(selector, child, active)
            now = time.monotonic()
            for child in [c for c in active if c.deadline <= now]:
                child.run.fail_current("timeout")
                _end(selector, child, active)
    finally:
        for child in list(active):
            _end(selector, child, active)
        selector.close()
    return [run.result for run in runs]


def _send_job(selector: selectors.BaseSelector, child: _Child) -> None:
    try:
        written = os.write(child.job_fd, child.job)
        child.job = child.job[written:]
    except BlockingIOError:
        return
    except OSError:
        child.job = child.job[:0]  # the child is gone; its result pipe reports that
    if not child.job:
        selector.unregister(child.job_fd)
        os.close(child.job_fd)
        child.job_fd = -1


def _receive(selector: selectors.BaseSelector, child: _Child, active: list[_Child]) -> None:
    run = child.run
    try:
        chunk = os.read(child.result_fd, _READ_CHUNK)
    except BlockingIOError:
        return
    if not chunk:  # the child exited (or closed its pipe) without saying it was done
        run.fail_current("crashed")
        _end(selector, child, active)
        return
    child.buffer += chunk
    while run.child is child:
        newline = child.buffer.find(b"\n")
        if newline < 0:
            if len(child.buffer) > _MAX_LINE:
                run.fail_current("too_large", "unreadable")
                _end(selector, child, active)
            return
        line = bytes(child.buffer[:newline])
        del child.buffer[: newline + 1]
        if not _apply_record(run, child, line):
            _end(selector, child, active)


def _apply_record(run: _Run, child: _Child, line: bytes) -> bool:
    """Apply one result line; return False when the child is finished."""
    try:
        record = json.loads(line)
        if not isinstance(record, dict):
            raise ValueError("not an object")
    except (ValueError, RecursionError):
        run.fail_current("unreadable")
        return False
    now = time.monotonic()
    if "module" in record and not child.module_ok:
        if record["module"] == "ok":
            child.module_ok = True
            run.result.seccomp = bool(record.get("seccomp"))
            child.deadline = now + run.spec.timeout_s
            return True
        run.result.module_error = _raised(record)
        return False
    if record.get("i") == run.next and child.module_ok and not run.finished:
        run.result.outcomes[run.next] = _outcome(record)
        run.next += 1
        child.deadline = now + run.spec.timeout_s
        return not run.finished
    # "done" before every call answered, or a record out of order: the child is lying.
    run.fail_current("unreadable")
    return False


def _outcome(record: dict[str, Any]) -> Outcome:
    if "ok" in record:
        try:
            return Outcome("value", decode(record["ok"]))
        except (ValueError, RecursionError):
            return Outcome("unreadable")
    if "raise" in record:
        return Outcome("raise", _raised(record))
    if "invalid" in record:
        return Outcome("invalid", str(record["invalid"])[:300])
    if record.get("too_large"):
        return Outcome("too_large")
    return Outcome("unreadable")


def _raised(record: dict[str, Any]) -> RaisedException:
    names = record.get("raise")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        names = ["Exception"]
    return RaisedException(tuple(names), str(record.get("msg", ""))[:300])


def _end(selector: selectors.BaseSelector, child: _Child, active: list[_Child]) -> None:
    for fd in (child.job_fd, child.result_fd):
        if fd >= 0:
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(fd)
            os.close(fd)
    child.job_fd = child.result_fd = -1
    child.run.zygote.kill(child.pid)
    if child.run.child is child:
        child.run.child = None
    if child in active:
        active.remove(child)
