"""A comparison over several seeds of the whole pipeline, pooled into one verdict.

``sweetrl compare --config quick --seeds 0,1,2 --out DIR`` (or ``seeds = [...]`` in the
config) runs :func:`benchmarks.harness.compare.run_comparison` once per seed, in ``DIR/seed-N``,
each seed re-drawing the warm start, the training data, the critic and the policy step,
then pools them (:func:`benchmarks.harness.pool.pool_runs`) into ``DIR/pooled.md`` and
``DIR/pooled.json``. Resumable: a finished seed is read back, an unfinished one continues.
A single seed's folder is the same as ``sweetrl compare --seed N --out DIR/seed-N``.

With ``parallel > 1`` (``--parallel N``) that many seeds run at once, each in a process of
its own with an equal share of the CPU threads and its output in ``DIR/seed-N.log``: one
135M-parameter seed leaves two CPU cores, or a GPU, partly idle. A seed that fails (an
error, or killed for memory) does not stop the others; the run then names it and its log,
and the same command resumes it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.experiment_config import ComparisonConfig
from sweetrl_gym.processes import process_state

__all__ = ["run_seeds", "seed_config", "seed_folder", "seed_log"]


def seed_config(config: ComparisonConfig, seed: int) -> ComparisonConfig:
    """Return the config of one seed's run: ``seed`` set, ``seeds`` emptied."""
    return config.replace(seed=seed, seeds=[])


def seed_folder(out: str | Path, seed: int) -> Path:
    """Return the folder of one seed's run inside a several-seed comparison's ``out``."""
    return Path(out) / f"seed-{seed}"


def run_seeds(
    config: ComparisonConfig | Mapping[str, Any],
    out: str | Path,
    *,
    progress: bool = True,
    parallel: int = 1,
) -> dict[str, Any] | None:
    """Run (or resume) the comparison once per seed of ``config.seeds``; pool them.

    Collective under several processes, as :func:`~benchmarks.harness.compare.run_comparison`;
    only the main process writes the pooled report.

    Args:
        config: From :func:`benchmarks.harness.experiment_config.load_config`, with
            ``seeds``; or a dict of its ``to_dict`` form, read with
            ``ComparisonConfig.from_dict``.
        out: The folder of the whole comparison (``seed-N`` folders and the pooled report).
        progress: Show progress bars and stage lines (with ``parallel``: a line as each
            seed starts and ends; the seeds' own lines go to their logs).
        parallel: Seeds run at once, each in its own process (``out/seed-N.log``), the
            CPU threads shared out equally. Not under several processes (``torchrun``).

    Returns:
        The pooled comparison (``pooled.json``'s data); ``None`` with one seed.

    Raises:
        ValueError: If ``config.seeds`` is empty, ``parallel`` is below 1 or above 1
            under several processes, or as ``run_comparison``.
        RuntimeError: If a seed run at once failed (the message names its log); the
            other seeds finish first.

    """
    from benchmarks.harness.compare import check_simulator, run_comparison
    from benchmarks.harness.pool import pool_runs, write_pooled

    if not isinstance(config, ComparisonConfig):
        config = ComparisonConfig.from_dict(config)
    seeds = list(config.seeds)
    if not seeds:
        raise ValueError("config.seeds is empty: run one seed with run_comparison")
    if parallel < 1:
        raise ValueError(f"parallel must be at least 1, got {parallel}")
    if parallel > 1 and process_state().num_processes > 1:
        raise ValueError(
            "parallel seeds run in processes of their own: launch without torchrun/accelerate, "
            "or leave parallel at 1 to run each seed on all the processes"
        )
    check_simulator(config)  # once, before any seed's folder or log is made
    out = Path(out)
    say = print if progress and process_state().is_main_process else (lambda *_: None)
    if parallel > 1:
        _run_at_once(config, seeds, out, parallel, say)
    else:
        for index, seed in enumerate(seeds, start=1):
            say(f"=== seed {seed} ({index}/{len(seeds)}): {seed_folder(out, seed)}")
            run_comparison(seed_config(config, seed), seed_folder(out, seed), progress=progress)
    if len(seeds) < 2:
        return None
    pooled = pool_runs([seed_folder(out, seed) for seed in seeds])
    state = process_state()
    if state.is_main_process:
        write_pooled(pooled, out)
    state.wait_for_everyone()
    return pooled


def seed_log(out: str | Path, seed: int) -> Path:
    """Return where a seed run at once (``parallel``) writes its output."""
    return Path(out) / f"seed-{seed}.log"


def _run_at_once(
    config: ComparisonConfig, seeds: Sequence[int], out: Path, parallel: int, say: Any
) -> None:
    """Run the seeds' comparisons, ``parallel`` at a time, each in a spawned process."""
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("spawn")  # fresh processes: no forked torch state
    threads = max(1, (os.cpu_count() or 1) // parallel)
    out.mkdir(parents=True, exist_ok=True)
    waiting = list(seeds)
    running: dict[int, tuple[Any, float]] = {}
    failed: dict[int, int | None] = {}
    try:
        while waiting or running:
            while waiting and len(running) < parallel:
                seed = waiting.pop(0)
                args = (config, seed, str(seed_folder(out, seed)), threads)
                process = context.Process(
                    target=_seed_process, args=(*args, str(seed_log(out, seed))), daemon=False
                )
                process.start()
                running[seed] = (process, time.monotonic())
                say(
                    f"=== seed {seed}: started, {threads} thread(s) "
                    f"(progress: {seed_log(out, seed)})"
                )
            wait([process.sentinel for process, _ in running.values()])
            for seed, (process, start) in list(running.items()):
                if process.is_alive():
                    continue
                process.join()
                del running[seed]
                minutes = (time.monotonic() - start) / 60
                if process.exitcode == 0:
                    say(f"=== seed {seed}: done in {minutes:.1f} min")
                else:
                    code = failed[seed] = process.exitcode
                    say(f"=== seed {seed}: failed (exit code {code}) after {minutes:.1f} min")
    except BaseException:  # interrupted: stop every seed (each resumes from its checkpoints)
        for process, _ in running.values():
            process.terminate()
        for process, _ in running.values():
            process.join()
        raise
    if failed:
        killed = " (killed: out of memory?)"
        lines = [
            f"seed {seed}: exit code {code}{killed if code and code < 0 else ''}, "
            f"see {seed_log(out, seed)}"
            for seed, code in sorted(failed.items())
        ]
        raise RuntimeError(
            f"{len(failed)} of {len(seeds)} seeds failed ({'; '.join(lines)}); the others "
            "finished. Run the same command again to resume them."
        )


def _seed_process(
    config: ComparisonConfig, seed: int, folder: str, threads: int, log: str
) -> None:  # pragma: no cover - runs in a spawned process (its effects are tested)
    """One seed's comparison in a process of its own, its output in ``log``."""
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)  # the C libraries' output too
    os.dup2(descriptor, 2)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    import torch

    torch.set_num_threads(threads)
    from benchmarks.harness.compare import run_comparison
    from benchmarks.machine import quiet_library_progress_bars

    quiet_library_progress_bars(downloads=True)  # as the command line does

    print(f"seed {seed}: {folder}, {threads} thread(s)", flush=True)
    run_comparison(seed_config(config, seed), folder, progress=True)
