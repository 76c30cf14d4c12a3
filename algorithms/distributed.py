"""Work split across processes: sharded passes, gathered results, full state dicts.

Under ``accelerate launch`` (or ``torchrun``) every process runs the same algorithm code.
Passes that need no gradient — reference log-probs, critic scores, best-of-n sampling —
are split by rank and gathered, so N processes do them N times faster and nobody waits
at a barrier for hours (NCCL's default timeout is 10 minutes). Every rank makes the
same number of model calls, so a sharded model's collectives (FSDP2 all-gathers) match.
With one process these helpers are plain loops.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
from tqdm.auto import tqdm

from algorithms.chunk_journal import ChunkJournal
from sweetrl_gym.processes import process_state

__all__ = [
    "from_main_process",
    "full_state_dict",
    "map_sharded",
    "reshard",
]

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


def map_sharded(
    items: Sequence[_Item],
    compute: Callable[[list[_Item]], list[_Result]],
    *,
    batch_size: int,
    journal: str | Path | None = None,
    progress: tqdm | None = None,
) -> list[_Result]:
    """Apply ``compute`` to ``items`` in chunks, split across processes; every rank gets all.

    Rank ``r`` takes a contiguous share of ``ceil(len / N)`` items (the last share is
    padded with repeats of the first item, whose results are dropped) and calls
    ``compute`` on chunks of ``batch_size``: every rank makes the same number of calls
    with the same chunk sizes, so collectives inside ``compute`` line up.

    Args:
        items: The work, in order.
        compute: Maps a chunk of items to one result per item (JSON-like values or
            tensors on the CPU; they travel with ``all_gather_object``).
        batch_size: Items per ``compute`` call.
        journal: A folder where each process logs its finished chunks
            (:class:`~algorithms.chunk_journal.ChunkJournal`): a pass stopped midway and
            called again with the same items skips the chunks every process had
            finished. ``compute`` must then return JSON values (restored chunks come
            back as parsed JSON).
        progress: A bar advanced by every chunk finished on any process (restored
            chunks included).

    Returns:
        One result per item, in ``items`` order, on every process.

    Raises:
        ValueError: If ``compute`` returns a different number of results than items.

    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    items = list(items)
    if not items:
        return []
    state = process_state()
    count, rank = state.num_processes, state.process_index
    share = math.ceil(len(items) / count)
    mine = items[rank * share : (rank + 1) * share]
    real = len(mine)
    mine += [items[0]] * (share - real)
    log = None if journal is None else ChunkJournal(journal, rank)
    finished: list[list[Any]] = []
    if log is not None:
        layout = {"items": len(items), "processes": count, "batch_size": batch_size}
        finished = _finished_everywhere(log, layout, mine, batch_size)
        log.start(layout, finished)
    results: list[_Result] = [result for chunk in finished for result in chunk]
    if progress is not None:
        progress.update(min(len(results) * count, len(items)))
    for start in range(len(finished) * batch_size, share, batch_size):
        chunk = mine[start : start + batch_size]
        out = list(compute(chunk))
        if len(out) != len(chunk):
            raise ValueError(f"compute returned {len(out)} results for {len(chunk)} items")
        if log is not None:
            log.append(out)
        if progress is not None:
            progress.update(len(chunk) * count)
        results += out
    if count == 1:
        return results
    gathered: list[Any] = [None] * count
    torch.distributed.all_gather_object(gathered, results[:real])
    return [result for part in gathered for result in part]


def _finished_everywhere(
    log: ChunkJournal, layout: dict[str, int], mine: list[Any], batch_size: int
) -> list[list[Any]]:
    """Return this process's journaled chunks, cut to as many as every process finished.

    Every rank must make the same number of ``compute`` calls from here on, so all resume
    from the chunk the slowest one reached.
    """
    finished = []
    for start, chunk in zip(range(0, len(mine), batch_size), log.finished(layout)):
        if len(chunk) != len(mine[start : start + batch_size]):
            break
        finished.append(chunk)
    state = process_state()
    if state.num_processes > 1:
        counts: list[Any] = [None] * state.num_processes
        torch.distributed.all_gather_object(counts, len(finished))
        finished = finished[: min(counts)]
    return finished


def reshard(model: torch.nn.Module) -> None:
    """Free the gathered parameters an FSDP2 model keeps after a forward without backward.

    FSDP2 leaves the root module's parameters gathered after its forward (a backward
    usually follows at once). After a no-gradient pass — scoring, a target network —
    nothing reshards them: a full copy stays on every process, and reading the module's
    state then sees unsharded views. A no-op for other models.
    """
    if callable(getattr(model, "reshard", None)):
        model.reshard()


def full_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Return ``model``'s whole state dict on the CPU, gathering shards (FSDP2) if needed.

    Collective when the model is sharded: call it on every process (the main process
    gets the tensors; the others may get an empty dict). Plain and DDP-unwrapped models
    just return their own state dict.
    """
    reshard(model)
    sharded = any(type(p).__name__ == "DTensor" for p in model.parameters())
    if not sharded:
        return model.state_dict()
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    return get_model_state_dict(
        model, options=StateDictOptions(full_state_dict=True, cpu_offload=True)
    )


def from_main_process(value: Any) -> Any:
    """Return the main process's ``value`` on every process (collective when distributed).

    For what every process computes but may not compute alike (a file that one of them
    wrote meanwhile, a sandbox verdict that timed out on one): they all go on with one.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]
