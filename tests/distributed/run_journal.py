"""A journaled sharded pass on each process, resumed from journals of unequal length.

Rank ``r`` starts with a journal of ``r + 1`` finished chunks (as when a stop finds the
processes at different chunks); every rank must go on from the chunk all of them had
finished, making the same calls, and all must get the whole result. Writes what each
rank computed to ``OUT/rank-<r>.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch.distributed as dist

from algorithms import map_sharded
from algorithms.chunk_journal import ChunkJournal


def main(out: Path) -> None:
    dist.init_process_group("gloo")
    rank, count = dist.get_rank(), dist.get_world_size()
    items, batch_size = list(range(12)), 2
    share = items[rank * 6 : (rank + 1) * 6]
    layout = {"items": len(items), "processes": count, "batch_size": batch_size}
    finished = [[x * x for x in share[i : i + 2]] for i in range(0, 2 * (rank + 1), 2)]
    ChunkJournal(out / "journal", rank).start(layout, finished)
    calls = []

    def square(chunk: list[int]) -> list[int]:
        calls.append(chunk)
        return [x * x for x in chunk]

    result = map_sharded(items, square, batch_size=batch_size, journal=out / "journal")
    (out / f"rank-{rank}.json").write_text(json.dumps({"calls": calls, "result": result}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
