"""One comparison at a time in a run folder.

A comparison resumes whatever its folder holds, so two of them started on one folder (a
second `sweetrl compare` on a seed that a pooled run is also running, say) would both
append to its episode files: every episode written twice. The main process of a launch
holds an exclusive lock on ``.lock`` in the folder for the whole run; a second launch is
refused before it writes anything. The lock goes with the process that holds it (a crash
or a kill releases it), so a stopped run resumes without any clean-up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from sweetrl_gym.processes import process_state

try:  # POSIX; elsewhere runs are not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_FILE", "folder_lock"]

LOCK_FILE = ".lock"
"""The lock's file in a run folder; it records who holds it (process id, host, start)."""


@contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Hold ``out``'s lock while the block runs (collective: every process must enter).

    Args:
        out: The run folder (created if missing).

    Raises:
        RuntimeError: If another launch holds the folder's lock (on every process).

    """
    from algorithms.distributed import from_main_process

    handle: IO[str] | None = None
    refusal = None
    if process_state().is_main_process:
        out.mkdir(parents=True, exist_ok=True)
        handle, refusal = _acquire(out / LOCK_FILE)
    refusal = from_main_process(refusal)
    if refusal is not None:
        raise RuntimeError(refusal)
    try:
        yield
    finally:
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


def _acquire(path: Path) -> tuple[IO[str] | None, str | None]:
    """Take the lock at ``path``: ``(open handle, None)``, or ``(None, why not)``."""
    if fcntl is None:
        return None, None
    handle = path.open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        return None, (
            f"{path.parent} is being written by another comparison ({holder}); wait for it "
            "to finish, or stop it, before running this one on the same folder"
        )
    handle.seek(0)
    handle.truncate()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    handle.write(f"process {os.getpid()} on {os.uname().nodename}, started {started}\n")
    handle.flush()
    return handle, None
