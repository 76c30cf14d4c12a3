"""Rejection fine-tuning: supervised learning on the agent turns of the best trajectories."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algorithms.base import Algorithm
from algorithms.batches import Dialogue, DialogueBatch, collate_dialogues
from algorithms.config import TrainingConfig
from algorithms.logprobs import token_logprobs
from algorithms.losses import sft_loss
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = ["RejectionFT", "RejectionFTConfig", "select_trajectories"]


@dataclass(frozen=True)
class RejectionFTConfig(TrainingConfig):
    """Settings of :class:`RejectionFT` (and every :class:`TrainingConfig` setting).

    The paper does not list this baseline's optimiser settings; the defaults follow its
    other stages (learning rate 2e-7, one epoch).

    Attributes:
        select: ``"success"``: every fully successful trajectory (the paper's baseline);
            ``"best_of_k"``: each task's best trajectory whose reward reaches
            ``min_reward`` (uses partial credit when successes are rare).
        min_reward: Lowest reward a ``"best_of_k"`` trajectory may have.

    """

    select: str = "success"
    min_reward: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_choice("select", ("success", "best_of_k"))


def select_trajectories(
    buffer: TrajectoryBuffer, *, select: str = "success", min_reward: float = 0.0
) -> TrajectoryBuffer:
    """Pick the trajectories rejection fine-tuning imitates.

    Args:
        buffer: All trajectories.
        select: ``"success"`` or ``"best_of_k"`` (see :class:`RejectionFTConfig`).
        min_reward: Threshold for ``"best_of_k"``.

    Returns:
        The chosen trajectories, in buffer order.

    """
    if select == "success":
        return buffer.filter(lambda t: t.success)
    if select != "best_of_k":
        raise ValueError(f"select must be 'success' or 'best_of_k', got {select!r}")
    best: dict[str, Trajectory] = {}
    for trajectory in buffer:
        kept = best.get(trajectory.task_id)
        if kept is None or trajectory.reward > kept.reward:
            best[trajectory.task_id] = trajectory
    chosen = {id(t) for t in best.values() if t.reward >= min_reward}
    return buffer.filter(lambda t: id(t) in chosen)


class RejectionFT(Algorithm):
    """Rejection fine-tuning (the paper's RFT baseline).

    Keeps the successful (or best-of-k) trajectories and trains the policy to imitate
    every one of their agent turns: negative log-likelihood of the action tokens given
    the turn's context, formatted with the policy's own chat template
    (:func:`algorithms.losses.sft_loss`). A batch is ``batch_size`` trajectories, each one
    sequence with every agent turn's tokens in the loss.

    Example:
        >>> rft = RejectionFT(agent, RejectionFTConfig(learning_rate=1e-5))
        >>> metrics = rft.fit(buffer)     # {"train/loss": ..., "train/num_turns": ...}

    """

    name = "rft"
    config_class = RejectionFTConfig
    config: RejectionFTConfig

    def _fit(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        kept = select_trajectories(
            buffer, select=self.config.select, min_reward=self.config.min_reward
        )
        if not len(kept):
            raise ValueError(
                f"no trajectory of the {len(buffer)} passes select={self.config.select!r}; "
                f"collect more (or use select='best_of_k')"
            )
        items = [
            Dialogue(self.policy_prompts(t.turns), [turn.action for turn in t.turns]) for t in kept
        ]
        stage = self._policy_stage(
            "policy", items, self._loss, collate_dialogues(self.encode_dialogues)
        )
        stage.weigh = lambda batch: float(batch.turns.action_mask.sum())  # a token mean
        metrics = self._run_stage(stage)
        return {
            **metrics,
            "train/num_trajectories": float(len(kept)),
            "train/num_turns": float(sum(len(t.turns) for t in kept)),
        }

    def _loss(self, model: Any, batch: DialogueBatch) -> tuple[Any, dict[str, float]]:
        device = next(model.parameters()).device
        token_logps, mask = token_logprobs(model, batch.turns.to(device))
        return sft_loss(token_logps, mask), {"action_tokens": float(mask.sum())}
