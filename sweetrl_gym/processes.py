"""The one way to ask which process this is (``accelerate``'s ``PartialState``)."""

from __future__ import annotations

from typing import Any

__all__ = ["process_state"]


def process_state() -> Any:
    """Return this process's ``accelerate.PartialState`` (no launcher: rank 0 of 1).

    On the CPU when ``ACCELERATE_USE_CPU`` says so (``accelerate launch --cpu``,
    ``torchrun`` on CPUs): a bare ``PartialState()`` ignores that variable (only
    ``Accelerator`` reads it), and every CPU process would think it runs alone. The first
    call fixes the state for the whole process.
    """
    from accelerate import PartialState
    from accelerate.utils import parse_flag_from_env

    return PartialState(cpu=parse_flag_from_env("ACCELERATE_USE_CPU"))
