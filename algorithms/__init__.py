"""Algorithms: SWEET-RL, its baselines and behaviour cloning (the warm start).

Each behind ``Algorithm(policy, config).fit(buffer)``.

Also the pieces they are built from: per-turn log-probs, pure losses, preference pairs,
critic inputs, the training loop and its callbacks. Importing this package imports torch.
"""

from algorithms.archer import ArCHer, ArCHerConfig, Transition, build_transitions
from algorithms.base import Algorithm, NothingToFit, require_items
from algorithms.batches import (
    Dialogue,
    DialogueBatch,
    DialoguePair,
    TurnPairBatch,
    TurnPairItem,
    collate_dialogues,
)
from algorithms.behavior_cloning import BehaviorCloning, BehaviorCloningConfig
from algorithms.callbacks import Callback, EvaluateCallback, StopAfterSteps
from algorithms.config import TrainingConfig
from algorithms.controls import SweetRLEnvironmentRanking, SweetRLNLLOnly, SweetRLRandomRanking
from algorithms.critic_inputs import (
    FACTS_HINT,
    REFERENCE_HINT,
    critic_prompt,
    critic_prompts,
    hint_fields,
)
from algorithms.distributed import full_state_dict, map_sharded
from algorithms.fit_context import Diagnostics, FitContext
from algorithms.logprobs import (
    TokenizedTurns,
    TurnLogProbs,
    encode_dialogues,
    encode_turns,
    token_logprobs,
    turn_logprobs,
)
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
from algorithms.models import ValueHeadModel
from algorithms.multiturn_dpo import MultiTurnDPO, MultiTurnDPOConfig
from algorithms.pairs import (
    TrajectoryPair,
    TurnPair,
    preference_dataset,
    split_pairs,
    trajectory_pairs,
    turn_pairs,
)
from algorithms.rejection_ft import RejectionFT, RejectionFTConfig, select_trajectories
from algorithms.sweet_rl import SweetRL, SweetRLConfig
from algorithms.trainer import Stage

__all__ = [
    "FACTS_HINT",
    "REFERENCE_HINT",
    "Algorithm",
    "ArCHer",
    "ArCHerConfig",
    "BehaviorCloning",
    "BehaviorCloningConfig",
    "Callback",
    "DPOOutput",
    "Diagnostics",
    "Dialogue",
    "DialogueBatch",
    "DialoguePair",
    "EvaluateCallback",
    "FitContext",
    "MultiTurnDPO",
    "MultiTurnDPOConfig",
    "NothingToFit",
    "RejectionFT",
    "RejectionFTConfig",
    "Stage",
    "StopAfterSteps",
    "SweetRL",
    "SweetRLConfig",
    "SweetRLEnvironmentRanking",
    "SweetRLNLLOnly",
    "SweetRLRandomRanking",
    "TokenizedTurns",
    "TrainingConfig",
    "TrajectoryPair",
    "Transition",
    "TurnLogProbs",
    "TurnPair",
    "TurnPairBatch",
    "TurnPairItem",
    "ValueHeadModel",
    "advantage_weighted_policy_loss",
    "bradley_terry_loss",
    "build_transitions",
    "collate_dialogues",
    "critic_prompt",
    "critic_prompts",
    "double_q_min",
    "dpo_loss",
    "encode_dialogues",
    "encode_turns",
    "full_state_dict",
    "hint_fields",
    "last_turn_scores",
    "map_sharded",
    "preference_dataset",
    "require_items",
    "select_trajectories",
    "sft_loss",
    "soft_update",
    "split_pairs",
    "td_targets",
    "token_logprobs",
    "trajectory_pairs",
    "trajectory_scores",
    "turn_advantage",
    "turn_logprobs",
    "turn_pairs",
    "value_regression_loss",
]
