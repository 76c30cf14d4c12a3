"""Preference pairs: trajectory-level (same task, better vs worse) and turn-level (best-of-n).

Both builders are pure and seeded, so pairs are the same on every process and every
resumed run.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from algorithms.batches import from_json, to_json
from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = [
    "HELD_OUT_RULES",
    "PAIR_DRAWS",
    "PAIR_RULES",
    "TURN_PAIRS",
    "TrajectoryPair",
    "TurnPair",
    "no_trajectory_pairs",
    "preference_dataset",
    "read_turn_pairs",
    "split_pairs",
    "split_turn_pairs",
    "trajectory_pairs",
    "turn_pairs",
    "write_turn_pairs",
]


PAIR_RULES = ("best", "all")
"""How a task's trajectories are paired: its best against each worse one (the official
Backend's, evaluate_code.py), or every two that differ enough (the official Frontend's,
evaluate_html.py)."""


@dataclass(frozen=True)
class TrajectoryPair:
    """Two episodes of one task, the first scored strictly higher.

    Attributes:
        task_id: The task both played.
        chosen: The better trajectory (with ``rule="best"``: the task's best).
        rejected: A strictly worse one.

    """

    task_id: str
    chosen: Trajectory
    rejected: Trajectory


@dataclass(frozen=True)
class TurnPair:
    """Two candidate actions for one turn, the first ranked higher by the critic.

    Attributes:
        messages: The chat before the action (the turn's context, OpenAI format).
        chosen: The preferred action.
        rejected: The other action.
        chosen_score: The critic's score of ``chosen``.
        rejected_score: The critic's score of ``rejected``.
        task_id: The task of the episode the turn comes from (``""``: unknown); several
            tasks may share a first request, so the messages alone may not tell.

    """

    messages: tuple[dict[str, str], ...]
    chosen: str
    rejected: str
    chosen_score: float = 0.0
    rejected_score: float = 0.0
    task_id: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))  # a list from JSON

    def reversed(self) -> TurnPair:
        """Return the same pair the other way round: ``rejected`` chosen, scores swapped."""
        return dataclasses.replace(
            self,
            chosen=self.rejected,
            rejected=self.chosen,
            chosen_score=self.rejected_score,
            rejected_score=self.chosen_score,
        )


def trajectory_pairs(
    buffer: TrajectoryBuffer | Sequence[Trajectory],
    *,
    success_only: bool = True,
    min_reward_gap: float = 0.0,
    rule: str = "best",
) -> list[TrajectoryPair]:
    """Pair each task's trajectories, the better one chosen (SWEET-RL step 1).

    Args:
        buffer: Trajectories; several per task (the paper collects k=3).
        success_only: Keep only tasks whose best trajectory succeeded (the paper's
            choice; partial credit is noisier).
        min_reward_gap: ``rule="best"``: a rejected trajectory must score below the
            best by more than this (``0``: any strictly lower reward). ``rule="all"``:
            the two must differ by at least this, and by something (the official
            Frontend script skips a pair whose difference is below 0.1).
        rule: ``"best"``: the task's best against each worse one (the official
            Backend's). ``"all"``: every two trajectories of the task, in their order
            in the buffer, the higher-scored one chosen (the official Frontend's).

    Returns:
        Pairs, tasks in order of first appearance; ties for best go to the first.

    Raises:
        ValueError: If ``rule`` is not one of :data:`PAIR_RULES`.

    """
    if rule not in PAIR_RULES:
        raise ValueError(f"rule must be one of {PAIR_RULES}, got {rule!r}")
    groups: dict[str, list[Trajectory]] = {}
    for trajectory in buffer:
        groups.setdefault(trajectory.task_id, []).append(trajectory)
    pairs = []
    for task_id, trajectories in groups.items():
        best = max(trajectories, key=lambda t: t.reward)  # max keeps the first of ties
        if success_only and not best.success:
            continue
        if rule == "all":
            pairs.extend(_every_pair(task_id, trajectories, min_reward_gap))
            continue
        pairs.extend(
            TrajectoryPair(task_id, best, other)
            for other in trajectories
            if best.reward - other.reward > min_reward_gap
        )
    return pairs


def _every_pair(
    task_id: str, trajectories: Sequence[Trajectory], min_gap: float
) -> list[TrajectoryPair]:
    pairs = []
    for i, first in enumerate(trajectories):
        for second in trajectories[i + 1 :]:
            gap = first.reward - second.reward
            if gap == 0 or abs(gap) < min_gap:
                continue
            chosen, rejected = (first, second) if gap > 0 else (second, first)
            pairs.append(TrajectoryPair(task_id, chosen, rejected))
    return pairs


def no_trajectory_pairs(num_trajectories: int, *, success_only: bool) -> str:
    """Say why :func:`trajectory_pairs` found no pair in a buffer, and what to do.

    Args:
        num_trajectories: How many trajectories the buffer holds.
        success_only: The ``success_only`` the pairs were built with.

    """
    return (
        f"no trajectory pairs in {num_trajectories} trajectories: each task needs a better "
        "and a strictly worse episode"
        + (" and at least one success (pair_success_only=True)" if success_only else "")
        + "; collect several samples per task (agents.collect(..., samples_per_task=3))"
    )


HELD_OUT_RULES = ("tasks", "first")
"""How :func:`split_pairs` holds trajectory pairs out: a share of the tasks drawn at
random (ours), or the first share of the pairs in their order (the official trainer's:
OpenRLHF's ``blending_datasets`` keeps the file's first 3% as eval data)."""

PAIR_DRAWS = ("distinct", "official")
"""How :func:`turn_pairs` draws a turn's pairs: distinct preferences, ties dropped (ours),
or the official script's independent draws, repeats and ties kept
(generate_random_pairs_from_ranks.py)."""


def split_pairs(
    pairs: Sequence[TrajectoryPair],
    *,
    held_out_fraction: float,
    seed: int = 0,
    rule: str = "tasks",
) -> tuple[list[TrajectoryPair], list[TrajectoryPair]]:
    """Split pairs into training and held-out sets.

    Args:
        pairs: From :func:`trajectory_pairs`.
        held_out_fraction: Share held out, in ``[0, 1)``.
        seed: Seeds the choice of tasks (``rule="tasks"``).
        rule: ``"tasks"``: that share of the tasks, drawn at random, all of a task's
            pairs on one side (with at least two tasks and a positive fraction, at least
            one task is held out and one kept). ``"first"``: the first
            ``int(len(pairs) * held_out_fraction)`` pairs, in the order given (the
            official trainer's rule; a task's pairs may fall on both sides).

    Returns:
        ``(train, held_out)``, each in the order given.

    Raises:
        ValueError: On a fraction out of range or an unknown ``rule``.

    """
    if not 0.0 <= held_out_fraction < 1.0:
        raise ValueError(f"held_out_fraction must be in [0, 1), got {held_out_fraction}")
    if rule not in HELD_OUT_RULES:
        raise ValueError(f"rule must be one of {HELD_OUT_RULES}, got {rule!r}")
    if rule == "first":
        count = int(len(pairs) * held_out_fraction)  # rounded down, as the official
        return list(pairs[count:]), list(pairs[:count])
    tasks = list(dict.fromkeys(pair.task_id for pair in pairs))
    count = round(len(tasks) * held_out_fraction)
    if held_out_fraction > 0 and len(tasks) >= 2:
        count = min(max(count, 1), len(tasks) - 1)
    order = np.random.default_rng([seed, zlib.crc32(b"split_pairs")]).permutation(len(tasks))
    held = {tasks[i] for i in order[:count]}
    return [p for p in pairs if p.task_id not in held], [p for p in pairs if p.task_id in held]


def split_turn_pairs(
    pairs: Sequence[TurnPair], *, held_out_fraction: float, seed: int = 0
) -> tuple[list[TurnPair], list[TurnPair]]:
    """Hold out a share of turn pairs from the policy step, as the official trainer does.

    The official script shuffles its turn pairs before writing them and the trainer
    keeps the file's first 3% as eval data: a random ``int(len(pairs) x fraction)``
    pairs (rounded down), whatever turn they come from. Here the pairs are shuffled
    with ``seed`` and the first that many held out.

    Args:
        pairs: Turn pairs (:meth:`~algorithms.SweetRL.candidate_pairs`).
        held_out_fraction: Share held out, in ``[0, 1)``; ``0``: none.
        seed: Seeds the shuffle.

    Returns:
        ``(train, held_out)``, each in the order given.

    """
    if not 0.0 <= held_out_fraction < 1.0:
        raise ValueError(f"held_out_fraction must be in [0, 1), got {held_out_fraction}")
    count = int(len(pairs) * held_out_fraction)
    order = np.random.default_rng([seed, zlib.crc32(b"split_turn_pairs")]).permutation(len(pairs))
    held = set(order[:count].tolist())
    return (
        [p for i, p in enumerate(pairs) if i not in held],
        [p for i, p in enumerate(pairs) if i in held],
    )


def turn_pairs(
    messages: Sequence[dict[str, str]],
    candidates: Sequence[str],
    scores: Sequence[float],
    *,
    num_pairs: int = 4,
    rng: np.random.Generator,
    task_id: str = "",
    draw: str = "distinct",
) -> list[TurnPair]:
    """Pair candidates of the top half with candidates of the bottom half (SWEET-RL step 4).

    Args:
        messages: The turn's context.
        candidates: Sampled actions for the turn.
        scores: The critic's score of each candidate.
        num_pairs: Pairs to draw (the paper: 4).
        rng: Source of randomness.
        task_id: The turn's task, recorded in each pair.
        draw: ``"distinct"``: the candidates ranked by score, each pair one of the upper
            half and one of the lower half (for an odd count the median goes to
            neither), no (chosen, rejected) combination twice, pairs whose scores tie
            skipped (they carry no preference); fewer than ``num_pairs`` when there are
            not enough. ``"official"`` (generate_random_pairs_from_ranks.py):
            ``num_pairs`` independent draws, each of one rank position in the lower
            half and one in the upper half of the ascending ranking (for an odd count
            the median is in the upper half), the higher-scored chosen and, on a tie,
            the upper one: always ``num_pairs`` pairs (from two candidates up), repeats
            and ties kept.

    Returns:
        The pairs.

    Raises:
        ValueError: On mismatched lengths or an unknown ``draw``.

    """
    if len(candidates) != len(scores):
        raise ValueError(f"{len(candidates)} candidates but {len(scores)} scores")
    if draw not in PAIR_DRAWS:
        raise ValueError(f"draw must be one of {PAIR_DRAWS}, got {draw!r}")
    if draw == "official":
        combos = _official_draws(scores, num_pairs, rng)
    else:
        combos = _distinct_draws(scores, num_pairs, rng)
    context = tuple(dict(m) for m in messages)
    return [
        TurnPair(
            context,
            candidates[c],
            candidates[r],
            float(scores[c]),
            float(scores[r]),
            task_id,
        )
        for c, r in combos
    ]


def _distinct_draws(
    scores: Sequence[float], num_pairs: int, rng: np.random.Generator
) -> list[tuple[int, int]]:
    ranked = sorted(range(len(scores)), key=lambda i: -scores[i])
    half = len(ranked) // 2
    top, bottom = ranked[:half], ranked[len(ranked) - half :]
    combos = [(c, r) for c in top for r in bottom if scores[c] > scores[r]]
    if not combos:
        return []
    picked = rng.choice(len(combos), size=min(num_pairs, len(combos)), replace=False)
    return [combos[i] for i in sorted(picked)]


def _official_draws(
    scores: Sequence[float], num_pairs: int, rng: np.random.Generator
) -> list[tuple[int, int]]:
    n = len(scores)
    if n < 2:
        return []
    ascending = np.argsort(np.asarray(scores, dtype=float), kind="stable").tolist()
    combos = []
    for _ in range(num_pairs):
        low = ascending[int(rng.integers(0, n // 2))]
        high = ascending[int(rng.integers(n // 2, n))]
        # The official comparison: the lower-half one is chosen only if strictly higher.
        combos.append((low, high) if scores[low] > scores[high] else (high, low))
    return combos


def preference_dataset(pairs: Sequence[TurnPair | TrajectoryPair], policy: Any = None) -> Any:
    """Export pairs as a TRL preference dataset (``prompt``, ``chosen``, ``rejected``).

    SWEET-RL's turn pairs (:meth:`algorithms.SweetRL.candidate_pairs`) and Multi-turn
    DPO's trajectory pairs (:func:`trajectory_pairs`) become rows that TRL's
    ``DPOTrainer`` trains on, so one can train on our data with TRL.

    Args:
        pairs: Turn pairs or trajectory pairs.
        policy: ``None``: TRL's conversational format (message lists; TRL applies the
            model's chat template). A :class:`~agents.TransformersAgent`: its exact
            prompt strings, system prompt included (TRL's standard format: the text our
            own trainers score). Trajectory pairs are conversational only.

    Returns:
        A ``datasets.Dataset``. A turn pair's row: the turn's context, then one
        assistant message each. A trajectory pair's row: the chat up to the first agent
        message (the task's request), then each episode's rest of the chat. TRL then
        scores every token of that rest, the human's replies included, where Multi-turn
        DPO scores the agent's turns only.

    Raises:
        TypeError: A pair of another kind, or trajectory pairs with a ``policy``.
        ModuleNotFoundError: Without the ``datasets`` package.

    """
    from datasets import Dataset

    rows = []
    for index, pair in enumerate(pairs):
        if isinstance(pair, TurnPair):
            rows.append(_turn_row(pair, policy))
        elif isinstance(pair, TrajectoryPair):
            if policy is not None:
                raise TypeError("trajectory pairs export in the conversational format only")
            rows.append(_trajectory_row(pair))
        else:
            raise TypeError(
                f"pair {index} is a {type(pair).__name__}, not a TurnPair/TrajectoryPair"
            )
    return Dataset.from_list(rows)


def _turn_row(pair: TurnPair, policy: Any) -> dict[str, Any]:
    if policy is not None:
        (prompt,) = policy.format_prompts([list(pair.messages)])
        return {"prompt": prompt, "chosen": pair.chosen, "rejected": pair.rejected}
    return {
        "prompt": [dict(m) for m in pair.messages],
        "chosen": [{"role": "assistant", "content": pair.chosen}],
        "rejected": [{"role": "assistant", "content": pair.rejected}],
    }


def _trajectory_row(pair: TrajectoryPair) -> dict[str, Any]:
    def split(messages: list[dict[str, str]]) -> int:
        return next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))

    chosen, rejected = pair.chosen.messages, pair.rejected.messages
    start = split(chosen)
    return {
        "prompt": [dict(m) for m in chosen[:start]],
        "chosen": [dict(m) for m in chosen[start:]],
        "rejected": [dict(m) for m in rejected[split(rejected) :]],
    }


TURN_PAIRS = "turn_pairs.json"
"""The turn pairs SWEET-RL's policy step trained on (``TurnPair`` rows), kept in its
folder by :meth:`~algorithms.SweetRL.diagnose`; each control keeps its ranking of them in
its own folder under the same name."""


def write_turn_pairs(path: Path, pairs: Sequence[TurnPair]) -> None:
    """Write turn pairs to a :data:`TURN_PAIRS` file, atomically."""
    text = json.dumps(to_json(pairs)) + "\n"
    write_atomically(path, lambda file: file.write_text(text, "utf-8"))


def read_turn_pairs(path: Path) -> list[TurnPair]:
    """Read the turn pairs of a :data:`TURN_PAIRS` file (see :func:`write_turn_pairs`)."""
    return from_json(TurnPair, json.loads(path.read_text()))
