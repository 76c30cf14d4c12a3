"""Algorithms: per-turn log-probs and pure losses (SWEET-RL and the baselines come next).

Importing this package imports torch.
"""

from algorithms.logprobs import TokenizedTurns, TurnLogProbs, encode_turns, turn_logprobs
from algorithms.losses import (
    DPOOutput,
    advantage_weighted_policy_loss,
    bradley_terry_loss,
    double_q_min,
    dpo_loss,
    last_turn_scores,
    sft_loss,
    soft_update,
    td_targets,
    trajectory_scores,
    turn_advantage,
    value_regression_loss,
)

__all__ = [
    "DPOOutput",
    "TokenizedTurns",
    "TurnLogProbs",
    "advantage_weighted_policy_loss",
    "bradley_terry_loss",
    "double_q_min",
    "dpo_loss",
    "encode_turns",
    "last_turn_scores",
    "sft_loss",
    "soft_update",
    "td_targets",
    "trajectory_scores",
    "turn_advantage",
    "turn_logprobs",
    "value_regression_loss",
]
