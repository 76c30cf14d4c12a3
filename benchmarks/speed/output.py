"""How the speed benchmarks hand over their result: kept as a JSON file, printed by ``main``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_DIR",
    "local_model_summary",
    "print_result",
    "run_from_command_line",
    "write_result",
]

DEFAULT_DIR = Path("runs") / "bench"
"""Where ``sweetrl bench`` and each benchmark run alone write, under the current folder.

Nothing is read back from here. The project's recorded speed results are kept in the
repository's ``research/results/`` (not installed): copy a run there to record it.
"""


def local_model_summary(agent: Any) -> dict[str, str]:
    """Return the machine (with torch's thread count), model name and dtype of a local agent.

    The first fields of the results of the benchmarks that time a local model's agent.
    """
    import torch

    from benchmarks.machine import machine_summary

    model = agent.model
    return {
        "machine": f"{machine_summary()}, torch threads {torch.get_num_threads()}",
        "model": getattr(model, "name_or_path", type(model).__name__),
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
    }


def write_result(result: dict[str, Any], out: Path | None) -> dict[str, Any]:
    """Write ``result`` as JSON to ``out`` (its folders made as needed); ``None``: nowhere.

    Returns:
        ``result``, so a benchmark's ``run`` can end with ``return write_result(...)``.

    """
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    return result


def print_result(result: dict[str, Any]) -> dict[str, Any]:
    """Print ``result`` as JSON (a script's output); return it."""
    print(json.dumps(result, indent=2))
    return result


def run_from_command_line(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    run: Callable[..., dict[str, Any]],
) -> dict[str, Any]:
    """Parse ``argv``, call ``run`` with the options, print and return its result.

    A ``ValueError`` from ``run`` (a bad setting) becomes the parser's usage error.
    """
    args = parser.parse_args(argv)
    try:
        result = run(**vars(args))
    except ValueError as err:
        parser.error(str(err))
    return print_result(result)
