"""Files that are never seen half-written: written beside their place, then renamed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["write_atomically"]


def write_atomically(path: str | os.PathLike[str], write: Callable[[Path], Any]) -> Path:
    """Write a file through a temporary sibling and a rename.

    A crash (or a reader) never sees a partial file: the old file, if any, stays whole
    until the new one replaces it in one step.

    Args:
        path: The file to write; its folder is created if missing.
        write: Writes the content to the path it is given (``Path.write_text``,
            ``Figure.savefig``, ``Image.save``, ...).

    Returns:
        ``path``.

    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A plain new file (not mkstemp's 0600): it gets the usual permissions. The process
    # id keeps two processes writing the same file from sharing a temporary.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path
