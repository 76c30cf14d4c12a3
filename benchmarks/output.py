"""How the speed benchmarks hand over their result: printed, and kept as a JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["emit_result"]


def emit_result(result: dict[str, Any], out: Path | None) -> dict[str, Any]:
    """Print ``result`` as JSON and, when ``out`` is given, write it there too.

    Args:
        result: The benchmark's measurements (JSON-serialisable).
        out: The file to write, its folders made as needed; ``None`` prints only.

    Returns:
        ``result``, so a benchmark's ``main`` can end with ``return emit_result(...)``.

    """
    text = json.dumps(result, indent=2)
    print(text)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
    return result
