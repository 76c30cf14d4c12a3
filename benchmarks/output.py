"""How the speed benchmarks hand over their result: kept as a JSON file, printed by ``main``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["print_result", "write_result"]


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
