"""Append-only JSONL files that survive a crash mid-write."""

from __future__ import annotations

from pathlib import Path

__all__ = ["drop_truncated_tail"]


def drop_truncated_tail(path: str | Path) -> bool:
    """Cut a last line that a crash left without its newline, so appends start clean.

    Records are written one line at a time; only the last line can be incomplete.

    Args:
        path: An existing JSONL file (not compressed).

    Returns:
        Whether a partial line was dropped.

    """
    path = Path(path)
    with path.open("r+b") as file:
        size = file.seek(0, 2)
        if size == 0:
            return False
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return False
        file.seek(0)
        data = file.read()
        file.truncate(data.rfind(b"\n") + 1)
    return True
