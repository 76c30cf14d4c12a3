"""The one way to ask which process this is (``accelerate``'s ``PartialState``)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["process_state"]


def process_state() -> Any:
    """Return this process's ``accelerate.PartialState`` (no launcher: rank 0 of 1).

    On the CPU when ``ACCELERATE_USE_CPU`` says so (``accelerate launch --cpu``), or when a
    launcher started several processes (``WORLD_SIZE`` > 1, e.g. plain ``torchrun``) on a
    machine without an accelerator. A bare ``PartialState()`` ignores that variable (only
    ``Accelerator`` reads it) and, on CPUs, never joins the process group: every process
    would think it runs alone and write every shared file itself. The variable is set for
    the later ``Accelerator`` too. The first call fixes the state for the whole process.

    Raises:
        RuntimeError: If a launcher started several processes but ``accelerate`` sees one.

    """
    from accelerate import PartialState
    from accelerate.utils import parse_flag_from_env

    launched = _launched_processes()
    if launched > 1 and not _has_accelerator():
        os.environ.setdefault("ACCELERATE_USE_CPU", "true")
    state = PartialState(cpu=parse_flag_from_env("ACCELERATE_USE_CPU"))
    if launched > 1 and state.num_processes != launched:
        raise RuntimeError(
            f"the launcher started {launched} processes (WORLD_SIZE) but accelerate sees "
            f"{state.num_processes}: each would write every shared file itself. Launch with "
            "`accelerate launch` or set ACCELERATE_USE_CPU=true for CPU processes"
        )
    return state


def _launched_processes() -> int:
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 1


def _has_accelerator() -> bool:
    """Whether torch sees a GPU or another accelerator (CUDA, XPU, MPS, ...)."""
    import torch

    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "is_available"):
        return bool(accelerator.is_available())
    return bool(torch.cuda.is_available())
