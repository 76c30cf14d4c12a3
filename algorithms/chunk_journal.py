"""A per-process log of finished chunks, so a long sharded pass resumes where it stopped.

Sampling the value actions of ArCHer or the candidates of SWEET-RL is a generation pass
that can run for an hour on a CPU, and its result is cached only once it is whole. A
:class:`ChunkJournal` keeps each chunk's results as it finishes (one JSON line per chunk,
flushed to disk), so a stopped run recomputes at most the chunk it was in.

Each process writes its own file. A line cut short by a crash is ignored; a journal
written with another split of the work (item count, process count, chunk size) is
discarded, since its chunks would not line up.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ChunkJournal"]


class ChunkJournal:
    """One process's finished chunks of one sharded pass, in a folder shared by all.

    Args:
        directory: The pass's folder (one ``rank-<r>.jsonl`` per process inside).
        rank: This process's index.

    """

    def __init__(self, directory: str | Path, rank: int = 0) -> None:
        self.directory = Path(directory)
        self.path = self.directory / f"rank-{rank}.jsonl"

    def finished(self, layout: dict[str, int]) -> list[list[Any]]:
        """Return the results of the chunks already finished under ``layout``, in order.

        Args:
            layout: What fixes the chunks (item count, process count, chunk size); a
                journal written under another layout counts as empty.

        """
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return []
        if not lines or _parse(lines[0]) != {"layout": layout}:
            return []
        chunks = []
        for line in lines[1:]:
            chunk = _parse(line)
            if not isinstance(chunk, list):  # cut short by a crash: what follows is lost
                break
            chunks.append(chunk)
        return chunks

    def start(self, layout: dict[str, int], kept: Sequence[list[Any]]) -> None:
        """Rewrite the journal to hold ``layout`` and the first finished chunks, ``kept``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        lines = [json.dumps({"layout": layout})] + [json.dumps(chunk) for chunk in kept]
        partial.write_text("".join(line + "\n" for line in lines))
        os.replace(partial, self.path)

    def append(self, results: list[Any]) -> None:
        """Record one more finished chunk's results (JSON values), flushed to disk.

        Raises:
            TypeError: If the results are not JSON-serialisable.

        """
        line = json.dumps(results)
        with self.path.open("a") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def remove(self) -> None:
        """Delete the whole pass's folder (every process's file): its result is stored."""
        shutil.rmtree(self.directory, ignore_errors=True)


def _parse(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None
