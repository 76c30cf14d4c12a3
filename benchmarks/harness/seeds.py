"""A comparison over several seeds of the whole pipeline, pooled into one verdict.

``sweetrl compare --config quick --seeds 0,1,2 --out DIR`` (or ``seeds = [...]`` in the
config) runs :func:`benchmarks.harness.compare.run_comparison` once per seed, in ``DIR/seed-N``,
each seed re-drawing the warm start, the training data, the critic and the policy step,
then pools them (:func:`benchmarks.harness.pool.pool_runs`) into ``DIR/pooled.md`` and
``DIR/pooled.json``. Resumable: a finished seed is read back, an unfinished one continues.
A single seed's folder is the same as ``sweetrl compare --seed N --out DIR/seed-N``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweetrl_gym.processes import process_state

__all__ = ["run_seeds", "seed_config", "seed_folder"]


def seed_config(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """Return the config of one seed's run: ``seed`` set, ``seeds`` left out."""
    return {**{k: v for k, v in config.items() if k != "seeds"}, "seed": seed}


def seed_folder(out: str | Path, seed: int) -> Path:
    """Return the folder of one seed's run inside a several-seed comparison's ``out``."""
    return Path(out) / f"seed-{seed}"


def run_seeds(
    config: Mapping[str, Any], out: str | Path, *, progress: bool = True
) -> dict[str, Any] | None:
    """Run (or resume) the comparison once per seed of ``config["seeds"]``; pool them.

    Collective under several processes, as :func:`~benchmarks.harness.compare.run_comparison`;
    only the main process writes the pooled report.

    Args:
        config: From :func:`benchmarks.harness.experiment_config.load_config`, with ``seeds``.
        out: The folder of the whole comparison (``seed-N`` folders and the pooled report).
        progress: Show progress bars and stage lines.

    Returns:
        The pooled comparison (``pooled.json``'s data); ``None`` with one seed.

    Raises:
        ValueError: If ``config["seeds"]`` is empty, or as ``run_comparison``.

    """
    from benchmarks.harness.compare import run_comparison
    from benchmarks.harness.pool import pool_runs, write_pooled

    seeds = list(config["seeds"])
    if not seeds:
        raise ValueError("config['seeds'] is empty: run one seed with run_comparison")
    out = Path(out)
    say = print if progress and process_state().is_main_process else (lambda *_: None)
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
