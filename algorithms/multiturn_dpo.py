"""Multi-turn DPO: trajectory-level preference pairs, every agent turn trained."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from algorithms.base import Algorithm
from algorithms.config import TrainingConfig
from algorithms.logprobs import turn_logprobs
from algorithms.losses import dpo_loss, trajectory_scores
from algorithms.pairs import trajectory_pairs
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = ["MultiTurnDPO", "MultiTurnDPOConfig"]


@dataclass(frozen=True)
class MultiTurnDPOConfig(TrainingConfig):
    """Settings of :class:`MultiTurnDPO` (and every :class:`TrainingConfig` setting).

    Attributes:
        batch_size: Trajectory pairs per forward pass (each brings all its turns).
        beta: DPO inverse temperature (the paper's DPO setting: 0.1).
        nll_coef: Weight of an NLL term on the chosen trajectory's actions (0: plain DPO).
        pair_success_only: Pair only tasks with a success, as SWEET-RL's critic data.
        min_reward_gap: A rejected trajectory must score lower by more than this.

    """

    batch_size: int = 1
    beta: float = 0.1
    nll_coef: float = 0.0
    pair_success_only: bool = True
    min_reward_gap: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_positive("beta")
        self._check_non_negative("nll_coef", "min_reward_gap")


class MultiTurnDPO(Algorithm):
    """The paper's Multi-turn DPO baseline.

    Pairs come from the same task (its best trajectory vs each strictly worse one). A
    trajectory's log-probability is the sum of its agent turns' action log-probs, each
    turn formatted with the policy's chat template, so every turn is trained — not only
    the last — and the DPO loss compares whole dialogues.

    Example:
        >>> dpo = MultiTurnDPO(agent, MultiTurnDPOConfig(beta=0.1))
        >>> metrics = dpo.fit(buffer)     # train/loss, train/reward_accuracy, ...

    """

    name = "mt-dpo"
    config_class = MultiTurnDPOConfig
    config: MultiTurnDPOConfig

    def _fit(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        pairs = trajectory_pairs(
            buffer,
            success_only=self.config.pair_success_only,
            min_reward_gap=self.config.min_reward_gap,
        )
        if not pairs:
            raise ValueError(
                f"no trajectory pairs in {len(buffer)} trajectories: each task needs a better "
                f"and a strictly worse episode; collect several samples per task"
            )
        items = self.trainer.cached(
            "trajectory_pairs",
            lambda: [
                {"chosen": self._side(p.chosen), "rejected": self._side(p.rejected)} for p in pairs
            ],
        )
        metrics = self._run_stage(self._policy_stage("policy", items, self._loss))
        return {**metrics, "train/num_pairs": float(len(pairs))}

    def _side(self, trajectory: Trajectory) -> dict[str, Any]:
        """Return a trajectory's policy prompts, actions and frozen summed log-prob."""
        prompts = self.policy_prompts(trajectory.turns)
        actions = [turn.action for turn in trajectory.turns]
        with torch.no_grad():
            logps = turn_logprobs(
                self.policy.model,
                self.encode(prompts, actions),
                micro_batch_size=self.config.batch_size,
            )
        return {"prompts": prompts, "actions": actions, "reference": float(logps.sum.sum())}

    def _loss(
        self, model: Any, batch: Sequence[dict[str, Any]]
    ) -> tuple[torch.Tensor, dict[str, float]]:
        prompts, actions, index = [], [], []
        for position, item in enumerate(batch):
            for offset, side in enumerate(("chosen", "rejected")):
                prompts += item[side]["prompts"]
                actions += item[side]["actions"]
                index += [2 * position + offset] * len(item[side]["prompts"])
        logps = turn_logprobs(model, self.encode(prompts, actions))
        index_tensor = torch.tensor(index, device=logps.sum.device)
        totals = trajectory_scores(logps.sum, index_tensor, 2 * len(batch))
        tokens = trajectory_scores(logps.num_tokens, index_tensor, 2 * len(batch))
        device = totals.device
        out = dpo_loss(
            totals[0::2],
            totals[1::2],
            torch.tensor([item["chosen"]["reference"] for item in batch], device=device),
            torch.tensor([item["rejected"]["reference"] for item in batch], device=device),
            beta=self.config.beta,
            chosen_nll=-totals[0::2] / tokens[0::2].clamp(min=1),
            nll_coef=self.config.nll_coef,
        )
        return out.loss, {
            "reward_accuracy": float(out.reward_accuracy),
            "reward_margin": float(out.reward_margin),
        }
