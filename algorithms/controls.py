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
Each is an :class:`~algorithms.SweetRL` whose ``controls`` names SWEET-RL: a comparison
fits it after SWEET-RL with SWEET-RL's settings and hands it SWEET-RL's folder, where
:meth:`~algorithms.SweetRL.diagnose` kept the pairs.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from algorithms.base import NothingToFit, require_items
from algorithms.distributed import from_main_process
from algorithms.fit_context import Diagnostics, FitContext
from algorithms.pair_signal import environment_ranked_pairs
from algorithms.pairs import TURN_PAIRS, TurnPair, read_turn_pairs, write_turn_pairs
from algorithms.sweet_rl import SweetRL
from sweetrl_gym.processes import process_state
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["SweetRLEnvironmentRanking", "SweetRLNLLOnly", "SweetRLRandomRanking"]


class _SweetRLControl(SweetRL):
    """SWEET-RL's policy step alone, on SWEET-RL's turn pairs as :meth:`rank` orders them."""

    controls = "sweet-rl"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._ranked: list[TurnPair] | None = None
        self._counts: dict[str, int] = {}

    @abstractmethod
    def rank(self, pairs: Sequence[TurnPair], context: FitContext) -> list[TurnPair]:
        """Return the control's ranking of SWEET-RL's ``pairs`` (a subset, each oriented)."""

    def prepare(self, context: FitContext) -> None:
        """Rank SWEET-RL's pairs, or read back the ranking this control started with.

        A resumed control trains on the ranking it started with: ``sweet-rl-env``'s runs
        the sandbox, whose verdicts can differ between calls (a test that timed out once),
        and its policy step resumes only on the same pairs. Every process takes the main
        process's ranking, for the same reason.

        Raises:
            NothingToFit: If SWEET-RL kept no pairs (it did not train) or none is left.

        """
        source = context.source / TURN_PAIRS if context.source is not None else None
        if source is None or not source.exists():
            raise NothingToFit(f"{self.name}: SWEET-RL did not train")
        pairs = read_turn_pairs(source)
        main = process_state().is_main_process
        kept_path = context.directory / TURN_PAIRS
        ranked = from_main_process(
            read_turn_pairs(kept_path) if main and kept_path.exists() else None
        )
        if ranked is None:
            ranked = from_main_process(self.rank(pairs, context))
            if main and ranked:
                context.directory.mkdir(parents=True, exist_ok=True)
                write_turn_pairs(kept_path, ranked)
        require_items(ranked, f"{self.name}: no turn pair left to train on")
        original = {(p.chosen, p.rejected) for p in pairs}
        swapped = sum((p.chosen, p.rejected) not in original for p in ranked)  # turned round
        self._ranked = ranked
        self._counts = {"source": len(pairs), "trained": len(ranked), "swapped": swapped}

    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Run SWEET-RL's policy step on the ranked pairs (:meth:`prepare` first)."""
        if self._ranked is None:
            raise RuntimeError(f"{self.name} trains on SWEET-RL's pairs: call prepare() first")
        return self.fit_policy(self._ranked)

    def diagnose(self, context: FitContext) -> Diagnostics:
        """Report how many of SWEET-RL's pairs it trained on, and how many it turned round."""
        return Diagnostics(record={"pairs": dict(self._counts)})


class SweetRLRandomRanking(_SweetRLControl):
    """Control: SWEET-RL's turn pairs, each ordered by a fair coin."""

    name = "sweet-rl-random"
    label = "Control: SWEET-RL, pairs ranked at random"

    def rank(self, pairs: Sequence[TurnPair], context: FitContext) -> list[TurnPair]:
        """Flip each pair with probability one half (seeded by the run's seed)."""
        coin = np.random.default_rng([context.seed, 27]).random(len(pairs)) < 0.5
        return [p.reversed() if flip else p for p, flip in zip(pairs, coin)]


class SweetRLEnvironmentRanking(_SweetRLControl):
    """Control: the pairs the environment tells apart, the better action chosen."""

    name = "sweet-rl-env"
    label = "Control: SWEET-RL, pairs ranked by the environment"

    def rank(self, pairs: Sequence[TurnPair], context: FitContext) -> list[TurnPair]:
        """Keep the pairs the environment tells apart (:func:`environment_ranked_pairs`)."""
        return environment_ranked_pairs(pairs, context.buffer, similarity=context.similarity)


class SweetRLNLLOnly(_SweetRLControl):
    """Control: the critic's pairs, the NLL anchor alone (``dpo_coef = 0``)."""

    name = "sweet-rl-nll"
    label = "Control: SWEET-RL, NLL on the chosen alone"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.config = self.config.replace(dpo_coef=0.0)

    def rank(self, pairs: Sequence[TurnPair], context: FitContext) -> list[TurnPair]:
        """Keep the critic's ranking."""
        return list(pairs)
