"""The machine: what a measurement ran on, and what our commands set for their process.

Every benchmark and report describes the machine with :func:`describe_machine`; the
entry points (``sweetrl``, ``python -m benchmarks.demo``) call
:func:`share_cores_politely` before anything loads torch, and
:func:`quiet_library_progress_bars` so that the console shows our own progress.
"""

from __future__ import annotations

import contextlib
import os
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "cpu_model",
    "describe_machine",
    "machine_line",
    "machine_summary",
    "quiet_library_progress_bars",
    "share_cores_politely",
]

_VERSIONS_OF = ("sweetrl-gym", "torch", "transformers", "trl", "playwright")


def cpu_model() -> str:
    """Return the CPU's model name (``/proc/cpuinfo``), or the architecture elsewhere."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def machine_summary() -> str:
    """Return one line for a report: ``"AMD EPYC, 2 cores, Python 3.11.9"``."""
    return f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def describe_machine() -> dict[str, Any]:
    """Describe this machine: CPU model, cores, RAM, GPU, OS, Python and library versions."""
    memory_gib = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = round(int(line.split()[1]) / 2**20, 1)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    machine: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_gib": memory_gib,
        "gpu": None,
        "os": platform.platform(),
        "python": platform.python_version(),
    }
    import torch

    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        machine["gpu"] = f"{props.name}, {props.total_memory / 2**30:.0f} GiB"
        machine["gpu_count"] = torch.cuda.device_count()
    machine["torch_threads"] = torch.get_num_threads()
    versions = {}
    for package in _VERSIONS_OF:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    machine["versions"] = versions
    return machine


def machine_line(machine: dict[str, Any]) -> str:
    """Return the machine description as one line of text."""
    cores = f"{machine['cores']} cores"
    if machine.get("usable_cores") not in (None, machine["cores"]):
        cores += f" ({machine['usable_cores']} usable)"
    memory = f", {machine['memory_gib']} GiB RAM" if machine.get("memory_gib") else ""
    gpu = machine.get("gpu") or "no GPU"
    versions = ", ".join(f"{name} {version}" for name, version in machine["versions"].items())
    return (
        f"{machine['cpu']}, {cores}{memory}, {gpu}; {machine['os']}; "
        f"Python {machine['python']}; {versions}"
    )


def share_cores_politely() -> None:
    """Let OpenMP threads sleep while they wait: ``OMP_WAIT_POLICY=PASSIVE``, unless set.

    Spinning waiters steal the cores when another job shares them: a training step of the
    135M model on 2 cores took 38 s with spinning waiters against 4.8 s with sleeping ones,
    next to one busy process. Effective only before torch loads its OpenMP runtime, so
    entry points call it first; our packages never set it on import.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def quiet_library_progress_bars(*, downloads: bool) -> None:
    """Hide transformers' own bars; keep the hub's download bars if ``downloads``.

    Loading weights, writing shards and converting the GGUF file print a bar each time a
    model is loaded or saved: dozens a comparison, between our own progress lines. A
    download of a hub model takes minutes, so its bar stays unless progress is off (or
    ``HF_HUB_DISABLE_PROGRESS_BARS`` is set).
    """
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars
    from transformers.utils import logging as transformers_logging

    hub_bars_were_off = are_progress_bars_disabled()
    transformers_logging.disable_progress_bar()  # turns the hub's bars off too
    if downloads and not hub_bars_were_off:
        enable_progress_bars()
