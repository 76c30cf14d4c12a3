"""How long a comparison's collections and evaluations took, kept in its folder.

A comparison's training times are in each method's ``fit.json``; this records the rest,
the stages that generate episodes: ``stage_times.json`` in the run folder maps a stage
(``"collect/train"``, ``"eval/rft"``, ...) to the seconds the launch that finished it
spent in it. A resumed launch leaves a recorded stage as it is (it rewrites nothing of a
finished run), and records none for a stage it found finished (a folder written before
stage times were kept, or copied from another run); the part of a stage done by a launch
killed mid-stage is not counted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.processes import process_state

__all__ = ["STAGE_TIMES", "read_stage_times", "timed_stage"]

STAGE_TIMES = "stage_times.json"
"""The file, in a comparison's folder."""


def read_stage_times(out: Path) -> dict[str, float]:
    """Return the seconds recorded per stage in ``out`` (empty if none or unreadable)."""
    try:
        data = json.loads((Path(out) / STAGE_TIMES).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(k): float(v)
        for k, v in data.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }


@contextmanager
def timed_stage(out: Path, stage: str, *, finished_before: bool = False) -> Iterator[None]:
    """Record the time the ``with`` block takes as ``stage``'s, unless it has one already.

    Main process only. Nothing is recorded if the block raises (a failed or killed stage
    is run again), nor when ``finished_before``: the stage's output was complete when
    the launch began, so the block only reads it back.
    """
    start = time.perf_counter()
    yield
    if finished_before or not process_state().is_main_process:
        return
    times = read_stage_times(out)
    if stage in times:  # finished by an earlier launch: this one only read it back
        return
    times[stage] = round(time.perf_counter() - start, 1)
    path = Path(out) / STAGE_TIMES
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(times, indent=2) + "\n"
    write_atomically(path, lambda target: target.write_text(text, "utf-8"))
