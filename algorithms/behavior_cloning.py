"""Behaviour cloning: supervised learning on every agent turn of the given trajectories.

The warm start of a comparison: a small model that never follows the protocol alone
(never writes ``I WANT TO ANSWER:``) is first cloned from a scripted demonstrator
(``agents.ScriptedCollaborator``), and every RL method then starts from that clone.
Rejection fine-tuning (:class:`~algorithms.RejectionFT`) is the same training on a
selection of the policy's own trajectories.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algorithms.base import Algorithm, require_items
from algorithms.batches import Dialogue, DialogueBatch, collate_dialogues
from algorithms.config import TrainingConfig
from algorithms.logprobs import token_logprobs
from algorithms.losses import sft_loss
from sweetrl_gym.lm import CausalLM
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["BehaviorCloning", "BehaviorCloningConfig"]


@dataclass(frozen=True)
class BehaviorCloningConfig(TrainingConfig):
    """Settings of :class:`BehaviorCloning` (every :class:`TrainingConfig` setting)."""


class BehaviorCloning(Algorithm):
    """Behaviour cloning (supervised fine-tuning) on every trajectory of the buffer.

    Each trajectory is one sequence, formatted with the policy's own system prompt and
    chat template; the loss is the negative log-likelihood of every agent turn's tokens
    (a token mean over the batch, :func:`algorithms.losses.sft_loss`). Subclasses choose
    which trajectories to imitate by overriding :meth:`select`.

    Example:
        >>> demos = collect("ColBench-Backend-v0", ScriptedCollaborator(0.5), ...)
        >>> BehaviorCloning(agent, learning_rate=1e-4).fit(demos)

    """

    name = "bc"
    config_class = BehaviorCloningConfig

    def select(self, buffer: TrajectoryBuffer) -> TrajectoryBuffer:
        """Return the trajectories to imitate (here: all of them).

        Raises:
            NothingToFit: If there are none.

        """
        require_items(
            buffer, "behaviour cloning needs at least one trajectory; the buffer is empty"
        )
        return buffer

    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Imitate every agent turn of the selected trajectories (one sequence per dialogue)."""
        kept = self.select(buffer)
        items = [
            Dialogue(self.policy_prompts(t.turns), [turn.action for turn in t.turns]) for t in kept
        ]
        stage = self.policy_stage(
            "policy",
            items,
            self._loss,
            collate_dialogues(self.encode_dialogues),
            weigh=lambda batch: float(batch.turns.action_mask.sum()),  # a token mean
            length=Dialogue.text_length,
        )
        metrics = self.run_stage(stage)
        return {
            **metrics,
            "train/num_trajectories": float(len(kept)),
            "train/num_turns": float(sum(len(t.turns) for t in kept)),
        }

    def _loss(self, model: CausalLM, batch: DialogueBatch) -> tuple[Any, dict[str, float]]:
        device = next(model.parameters()).device
        token_logps, mask = token_logprobs(model, batch.turns.to(device))
        return sft_loss(token_logps, mask), {"action_tokens": float(mask.sum())}
