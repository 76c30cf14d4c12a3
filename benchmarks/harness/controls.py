"""Controls of SWEET-RL: its own policy step on its own candidates, ranked without its critic.

SWEET-RL is a critic that ranks sampled candidate actions, then a DPO step (with an NLL
anchor on the chosen action) on the ranked turn pairs. A gain over the base can come from
either part. The controls keep everything but the ranking: the same turn pairs
(``methods/sweet-rl/turn_pairs.json``), the same settings, the same base policy and the
same held-out tasks; only which action of a pair is "chosen" changes.

- ``sweet-rl-random``: each pair's order is a fair coin's. If SWEET-RL does not beat this,
  its critic adds nothing a coin does not.
- ``sweet-rl-env``: the pairs the environment tells apart, the better action chosen (the
  simulated human's replies for two questions, the hidden tests for two answers): a
  perfect critic, an upper bound for diagnosis. Backend only.
- ``sweet-rl-nll``: the critic's pairs, but the NLL anchor alone (``dpo_coef = 0``):
  supervised training on the critic's chosen candidates. If the random control gains
  too, this tells whether the DPO term matters at all.

They are diagnostics, not methods: none reads the reference at evaluation, but
``sweet-rl-env`` reads the simulated human and the hidden tests to rank its training pairs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness.pair_signal import env_similarity, environment_ranked_pairs
from benchmarks.harness.policies import base_policy
from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.processes import process_state
from sweetrl_gym.similarity import Similarity
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = [
    "CONTROLS",
    "SOURCE",
    "TURN_PAIRS",
    "control_pairs",
    "fit_control",
    "is_control",
    "read_turn_pairs",
    "write_turn_pairs",
]

SOURCE = "sweet-rl"
"""The method whose turn pairs the controls re-rank (and whose settings they train with)."""

TURN_PAIRS = "turn_pairs.json"
"""SWEET-RL's trained-on turn pairs (``TurnPair`` rows) in ``methods/sweet-rl``: the
comparison writes them, the controls re-rank them."""

CONTROLS = ("sweet-rl-random", "sweet-rl-env", "sweet-rl-nll")
"""The controls a comparison can run (after SWEET-RL, in ``methods.run``)."""


def write_turn_pairs(path: Path, pairs: Sequence[Any]) -> None:
    """Write turn pairs (``algorithms.pairs.TurnPair``) to a :data:`TURN_PAIRS` file, atomically."""
    from algorithms.batches import to_json

    text = json.dumps(to_json(pairs)) + "\n"
    write_atomically(path, lambda file: file.write_text(text, "utf-8"))


def read_turn_pairs(path: Path) -> list[Any]:
    """Read the turn pairs of a :data:`TURN_PAIRS` file (see :func:`write_turn_pairs`)."""
    from algorithms.batches import from_json
    from algorithms.pairs import TurnPair

    return from_json(TurnPair, json.loads(path.read_text()))


def is_control(name: str) -> bool:
    """Whether ``name`` is one of :data:`CONTROLS`."""
    return name in CONTROLS


def control_pairs(
    name: str,
    pairs: Sequence[Any],
    buffer: TrajectoryBuffer,
    *,
    seed: int,
    similarity: Similarity | None = None,
) -> list[Any]:
    """Rank SWEET-RL's turn pairs as the control ``name`` does.

    Args:
        name: One of :data:`CONTROLS`.
        pairs: SWEET-RL's turn pairs (``algorithms.pairs.TurnPair``).
        buffer: The episodes they were sampled from (``sweet-rl-env`` judges by them).
        seed: The coin's seed (``sweet-rl-random``).
        similarity: How ``sweet-rl-env`` scores Frontend pages (the environment's scorer;
            default: perceptual similarity).

    Returns:
        The pairs, each oriented by the control (``sweet-rl-env``: only those the
        environment tells apart; ``sweet-rl-nll``: the critic's, unchanged).

    Raises:
        ValueError: For an unknown control.

    """
    if name == "sweet-rl-random":
        coin = np.random.default_rng([seed, 27]).random(len(pairs)) < 0.5
        return [p.reversed() if flip else p for p, flip in zip(pairs, coin)]
    if name == "sweet-rl-env":
        return environment_ranked_pairs(pairs, buffer, similarity=similarity)
    if name == "sweet-rl-nll":
        return list(pairs)
    raise ValueError(f"no control {name!r}; choose from {CONTROLS}")


def fit_control(
    name: str,
    config: Mapping[str, Any],
    buffer: TrajectoryBuffer,
    out: Path,
    *,
    progress: bool = True,
) -> dict[str, Any]:
    """Train a control's policy step from the base policy; save it under ``methods/NAME``.

    Reads SWEET-RL's turn pairs from ``out/methods/sweet-rl``; trains with SWEET-RL's
    settings (``[training]`` updated by ``[methods.sweet-rl]``). A finished control
    (``fit.json``) is not redone. Collective under several processes (every process
    trains; the main one writes).

    Returns:
        The ``fit.json`` record: ``status`` (``"trained"``, or ``"skipped"`` with a
        ``reason`` when SWEET-RL did not train or no pair is left), ``metrics``,
        ``seconds`` and ``pairs`` (how many it trained on, how many it swapped).

    """
    from algorithms import SweetRL

    directory = out / "methods" / name
    record_path = directory / "fit.json"
    if record_path.exists():
        return json.loads(record_path.read_text())
    record = _skip_reason(name, out)
    if record is None:
        pairs = read_turn_pairs(out / "methods" / SOURCE / TURN_PAIRS)
        ranked = _ranked_pairs(name, pairs, buffer, config, directory)
        original = {(p.chosen, p.rejected) for p in pairs}
        swapped = sum((p.chosen, p.rejected) not in original for p in ranked)  # turned round
        if not ranked:
            record = {"status": "skipped", "reason": f"{name}: no turn pair left to train on"}
        else:
            settings = {**config["training"], **config["methods"].get(SOURCE, {})}
            settings = {"seed": config["seed"], **settings, "output_dir": str(directory / "run")}
            if name == "sweet-rl-nll":
                settings["dpo_coef"] = 0.0
            settings["progress"] = progress and settings.get("progress", True)
            algorithm = SweetRL(base_policy(config, out), **settings)
            start = time.perf_counter()
            metrics = algorithm.fit_policy(ranked, resume=True)  # a stopped control goes on
            algorithm.save(directory / "model")  # collective
            record = {
                "status": "trained",
                "metrics": metrics,
                "history": [list(point) for point in algorithm.history],
                "seconds": round(time.perf_counter() - start, 1),
                "pairs": {"source": len(pairs), "trained": len(ranked), "swapped": swapped},
            }
            del algorithm
    state = process_state()
    if state.is_main_process:
        text = json.dumps(record, indent=2, default=float) + "\n"
        write_atomically(record_path, lambda path: path.write_text(text, "utf-8"))
    state.wait_for_everyone()
    return record


def _ranked_pairs(
    name: str,
    pairs: Sequence[Any],
    buffer: TrajectoryBuffer,
    config: Mapping[str, Any],
    directory: Path,
) -> list[Any]:
    """Return the control's ranking of ``pairs``, kept in ``directory`` once made.

    A resumed control trains on the ranking it started with: ``sweet-rl-env``'s runs the
    sandbox, whose verdicts can differ between calls (a test that timed out once), and
    its policy step resumes only on the same pairs. Every process takes the main
    process's ranking, for the same reason.
    """
    from algorithms.distributed import from_main_process

    state = process_state()
    path = directory / TURN_PAIRS
    kept = from_main_process(
        read_turn_pairs(path) if state.is_main_process and path.exists() else None
    )
    if kept is not None:
        return kept
    similarity = env_similarity(config) if name == "sweet-rl-env" else None
    ranked = control_pairs(name, pairs, buffer, seed=config["seed"], similarity=similarity)
    ranked = from_main_process(ranked)
    if state.is_main_process and ranked:
        directory.mkdir(parents=True, exist_ok=True)
        write_turn_pairs(path, ranked)
    return ranked


def _skip_reason(name: str, out: Path) -> dict[str, Any] | None:
    source = out / "methods" / SOURCE / "fit.json"
    if not source.exists() or json.loads(source.read_text()).get("status") != "trained":
        return {"status": "skipped", "reason": f"{name}: SWEET-RL did not train"}
    return None
