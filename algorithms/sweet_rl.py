"""SWEET-RL (Zhou et al. 2025, arXiv 2503.15478): an asymmetric critic gives turn-level credit.

Read top to bottom, this file is the algorithm in the paper's order. Each step is a
public method usable on its own; :meth:`SweetRL.fit` runs them in sequence.

1. **Trajectory pairs** (:meth:`SweetRL.trajectory_pairs`): per task, the best episode
   vs each strictly worse one (tasks with a success only, by default).
2. **The critic** (:meth:`SweetRL.fit_critic`): a causal LM that also reads the
   training-time information (the reference solution) scores a turn by its advantage
   ``beta x (mean log-prob of the action under the critic - under the critic's frozen
   start)``; a Bradley–Terry loss makes the chosen episode's score (its summed turn
   advantages, or the official code's one token mean) beat the rejected one's.
   :meth:`SweetRL.critic_accuracy` measures it on held-out pairs;
   :meth:`SweetRL.turn_advantages` gives one episode's per-turn advantages.
3. **Candidates** (:meth:`SweetRL.candidate_pairs`): for a share of the buffer's turns,
   sample ``n`` actions from the policy and score each with the critic
   (:meth:`SweetRL.score_actions`); by default, candidates cut off at ``max_new_tokens``
   are dropped (they would teach the policy to stop mid-answer).
4. **Turn pairs** (same method): one top-half candidate vs one bottom-half candidate,
   4 pairs per turn.
5. **The policy** (:meth:`SweetRL.fit_policy`): DPO on the turn pairs plus an NLL term on
   the chosen action.

Ablations of the paper are settings: ``critic_uses_reference=False`` (no training-time
information), ``critic_head="value"`` (a scalar value head instead of the log-ratio),
``length_normalize=False`` (summed instead of mean log-probs) and
``critic_score="last_turn"`` (a trajectory scored by its last turn only);
``critic_score="token_mean"`` is the official code's trajectory score.

The critic is one object (:mod:`algorithms.critic`): a copy of the policy, a LoRA adapter
on its base, or a model of its own, each keeping its frozen start, which is also the
sampling policy that candidates are measured against, so scores stay right after the
policy has been trained or the algorithm reloaded.

Many processes: the reference, scoring, sampling and accuracy passes are split across
ranks (:func:`algorithms.distributed.map_sharded`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from tqdm.auto import tqdm

from algorithms.base import Algorithm, require_items
from algorithms.batches import (
    Dialogue,
    DialoguePair,
    TurnPairBatch,
    TurnPairItem,
    collate_turn_pairs,
    from_json,
    split_by_lengths,
    to_json,
)
from algorithms.config import TrainingConfig
from algorithms.critic import (
    CANDIDATE_TOKENS,
    CRITIC_HEADS,
    CRITIC_SCORES,
    CRITIC_TOKENS,
    Critic,
    make_critic,
)
from algorithms.critic_inputs import HINT_POSITIONS, REFERENCE_HINT, critic_prompt
from algorithms.distributed import map_sharded, reshard
from algorithms.fit_context import Diagnostics, FitContext
from algorithms.logprobs import TokenizedTurns, turn_logprobs
from algorithms.lora import POLICY_ADAPTER, adapter_active, is_peft_model
from algorithms.losses import bradley_terry_loss, dpo_loss
from algorithms.pairs import (
    HELD_OUT_RULES,
    PAIR_DRAWS,
    PAIR_RULES,
    TURN_PAIRS,
    TrajectoryPair,
    TurnPair,
    no_trajectory_pairs,
    split_pairs,
    split_turn_pairs,
    trajectory_pairs,
    turn_pairs,
    write_turn_pairs,
)
from algorithms.trainer import Stage
from sweetrl_gym.actions import parse_action
from sweetrl_gym.lm import CausalLM
from sweetrl_gym.processes import process_state
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__all__ = ["SweetRL", "SweetRLConfig"]

_DROPPED_CANDIDATES = {
    "truncated_candidates": "were cut off at max_new_tokens and dropped, leaving too few "
    "complete ones; raise candidate_max_new_tokens or set drop_truncated_candidates=False",
    "question_candidates": "did not answer and were dropped (a turn after question_turns), "
    "leaving too few answers; raise num_candidates or set question_turns=None",
}
"""Why sampled candidates were left out of the turn pairs (counts in the cached pairs), and
what to change when that left no pair."""


@dataclass(frozen=True)
class SweetRLConfig(TrainingConfig):
    r"""Settings of :class:`SweetRL` (and every :class:`TrainingConfig` setting).

    "(official)": the default is the paper's and facebookresearch/sweet_rl's; "(official:
    X)": the default is ours and the ``paper`` configs set X (docs/reproducing.md: why).
    Shared settings: ``learning_rate`` is official; ``max_length`` (official: 16384), the
    batch (official: 8 pairs a step) and the Adam betas and schedule (as
    :class:`TrainingConfig` says) are ours.

    Attributes:
        dpo_beta: DPO inverse temperature of the policy step (official).
        nll_coef: Weight of the NLL term on the chosen action (official).
        dpo_coef: Weight of the DPO term (official); 0 leaves the NLL alone (``sweet-rl-nll``).
        critic_learning_rate: The critic's step size (official).
        critic_epochs: Passes over the trajectory pairs (official).
        critic_beta: Scale of a turn's advantage (official).
        critic_batch_size: Trajectory pairs per critic forward pass, two rows each (official).
        critic_uses_reference: The critic reads the hint (official); False: the paper's ablation.
        critic_head: ``"log_ratio"`` (official) or ``"value"``: the paper's ablation, no LoRA.
        length_normalize: Mean token log-probs in an advantage (official); False: ablation, sums.
        critic_score: Sum of turn advantages, or ``"last_turn"`` (official: ``"token_mean"``).
        hint_template: The training-time information in words (official: the ground truth).
        hint_position: ``"system"``: ends the system prompt (official: ``"prefix"``, before it).
        critic_model: A model to start the critic from; ``None``: the policy (official).
        critic_max_length: Longest critic row; ``None``: ``max_length`` (official: 8192).
        nll_scope: The NLL on the chosen ``"action"`` (official: ``"sequence"``, the whole row).
        pair_success_only: Trajectory pairs only from tasks with a success (official).
        min_reward_gap: A rejected trajectory scores lower by more than this (official: 0;
            with ``pair_rule="all"``: at least this, official Frontend 0.1).
        pair_rule: ``"best"``: a task's best trajectory against each worse one (official
            Backend); ``"all"``: every two that differ (official Frontend).
        held_out_fraction: Share of the trajectory pairs held out of the critic's
            training to measure it (official: 0.03).
        held_out_rule: ``"tasks"``: that share of the tasks, drawn at random (official:
            ``"first"``: that share of the pairs, rounded down, first in their order).
        critic_tokens: The critic's counted tokens: ``"actions"``, each turn's action as
            sent and its end token (official: ``"official"``, the fork's mask: after
            each assistant header its ``\n\n``, the message as the last prompt shows
            it and its end token; on the last turn a ``" "`` before it).
        candidate_fraction: Share of turns (or trajectories) that get candidates (official).
        candidate_selection: ``"turns"``, drawn at random (official: ``"trajectories"``, first).
        num_candidates: Actions sampled per selected turn (official).
        candidate_temperature: The candidates' sampling temperature (official).
        candidate_max_new_tokens: Longest candidate; ``None``: the policy's (official: 1024).
        drop_truncated_candidates: Leave out candidates cut off at their length (official: False).
        pairs_per_turn: Top-half vs bottom-half turn pairs drawn per turn (official).
        candidate_tokens: The tokens a candidate's critic score averages: ``"action"``,
            the candidate and its end token (official: ``"official"``, the generation
            prompt's header tokens and the candidate, no end token; the baseline, the
            candidate and its end token either way).
        pair_draw: ``"distinct"``: no pair twice, ties dropped (official: ``"official"``,
            independent draws, repeats and ties kept).
        policy_held_out_fraction: Share of the turn pairs held out of the policy's
            training to measure it (official: 0.03, a random share, rounded down).
        question_turns: Question pairs up to this turn, answers after; ``None``: all (official).

    """

    dpo_beta: float = 0.1
    nll_coef: float = 0.01
    dpo_coef: float = 1.0
    critic_learning_rate: float = 2e-7
    critic_epochs: int = 4
    critic_beta: float = 0.1
    critic_batch_size: int = 1
    critic_uses_reference: bool = True
    critic_head: str = "log_ratio"
    length_normalize: bool = True
    critic_score: str = "turn_sum"
    hint_template: str = REFERENCE_HINT
    hint_position: str = "system"
    critic_model: str | None = None
    critic_max_length: int | None = None
    nll_scope: str = "action"
    pair_success_only: bool = True
    min_reward_gap: float = 0.0
    pair_rule: str = "best"
    held_out_fraction: float = 0.1
    held_out_rule: str = "tasks"
    critic_tokens: str = "actions"
    candidate_fraction: float = 0.1
    candidate_selection: str = "turns"
    num_candidates: int = 16
    candidate_temperature: float = 1.0
    candidate_max_new_tokens: int | None = None
    drop_truncated_candidates: bool = True
    pairs_per_turn: int = 4
    candidate_tokens: str = "action"
    pair_draw: str = "distinct"
    policy_held_out_fraction: float = 0.0
    question_turns: int | None = None

    REMOVED_SETTINGS: ClassVar[dict[str, str]] = {
        "nll_turns": "the NLL term anchors every chosen action, as the paper's",
        "mixed_pairs": "a turn's candidates are paired whatever their kind, as the paper's",
        "pair_gap_quantile": "every turn pair is trained on, as the paper's",
        "critic_baseline": "candidates are scored against the sampling policy, as the "
        "official code's",
        "pair_turns": "every turn gets candidates, as the paper's, and question_turns keeps "
        "question pairs to the first turns",
    }

    def __post_init__(self) -> None:
        if self.critic_score == "sum":
            raise ValueError(
                "critic_score='sum' is the name an older version of sweetrl-gym gave "
                "'turn_sum': what sets it was written by that version; set 'turn_sum' (a run "
                "of that version cannot resume: use a new output_dir)"
            )
        super().__post_init__()
        self._check_positive("dpo_beta", "critic_learning_rate", "critic_epochs", "critic_beta")
        self._check_positive("critic_batch_size", "pairs_per_turn")
        self._check_non_negative("nll_coef", "dpo_coef", "min_reward_gap", "candidate_temperature")
        if self.dpo_coef == 0 and self.nll_coef == 0:
            raise ValueError("dpo_coef and nll_coef are both 0: the policy step has no loss")
        self._check_fraction("candidate_fraction")
        self._check_choice("critic_head", CRITIC_HEADS)
        self._check_choice("nll_scope", ("action", "sequence"))
        self._check_choice("hint_position", HINT_POSITIONS)
        if self.critic_max_length is not None:
            self._check_positive("critic_max_length")
        self._check_choice("critic_score", CRITIC_SCORES)
        self._check_choice("candidate_selection", ("turns", "trajectories"))
        self._check_choice("pair_rule", PAIR_RULES)
        self._check_choice("held_out_rule", HELD_OUT_RULES)
        self._check_choice("pair_draw", PAIR_DRAWS)
        self._check_choice("critic_tokens", CRITIC_TOKENS)
        self._check_choice("candidate_tokens", CANDIDATE_TOKENS)
        if self.critic_tokens == "official" and self.critic_head != "log_ratio":
            raise ValueError(
                "critic_tokens='official' is the log-ratio critic's token mask; it needs "
                f"critic_head='log_ratio', got {self.critic_head!r}"
            )
        if self.question_turns is not None and (
            isinstance(self.question_turns, bool)
            or not isinstance(self.question_turns, int)
            or self.question_turns < 1
        ):
            raise ValueError(
                f"question_turns must be a positive int or None, got {self.question_turns!r}"
            )
        if self.critic_score == "token_mean" and not self.length_normalize:
            raise ValueError(
                "critic_score='token_mean' is itself a length normalisation (one mean over "
                "the dialogue's tokens); it needs length_normalize=True"
            )
        if self.critic_score == "token_mean" and self.critic_head != "log_ratio":
            raise ValueError(
                "critic_score='token_mean' averages per-token log-ratios; it needs "
                f"critic_head='log_ratio', got {self.critic_head!r}"
            )
        if not 0.0 <= self.held_out_fraction < 1.0:
            raise ValueError(f"held_out_fraction must be in [0, 1), got {self.held_out_fraction}")
        if not 0.0 <= self.policy_held_out_fraction < 1.0:
            raise ValueError(
                f"policy_held_out_fraction must be in [0, 1), got {self.policy_held_out_fraction}"
            )
        if self.num_candidates < 2:
            raise ValueError(
                f"num_candidates must be at least 2 (pairs need two), got {self.num_candidates}"
            )
        if self.lora_rank and self.critic_head == "value":
            raise ValueError("critic_head='value' needs full fine-tuning (lora_rank=0)")


@dataclass(frozen=True)
class _RankedCandidates:
    """One selected turn's candidates: those kept, their critic scores, the dropped counts.

    Attributes:
        candidates: The sampled actions left after dropping (see ``_DROPPED_CANDIDATES``).
        scores: The critic's score of each.
        dropped: How many were dropped, by reason (the keys of ``_DROPPED_CANDIDATES``).

    """

    candidates: list[str]
    scores: list[float]
    dropped: dict[str, int]


class SweetRL(Algorithm):
    """SWEET-RL: an asymmetric critic from trajectory pairs, then DPO on its turn-level pairs.

    Example:
        >>> algo = SweetRL(agent, SweetRLConfig(output_dir="runs/sweet"))
        >>> metrics = algo.fit(buffer)   # critic/heldout_pair_accuracy, train/loss, ...
        >>> agents.evaluate(algo.policy, "ColBench-Backend-v0", num_tasks=100)

    Attributes:
        critic: The critic (:class:`algorithms.critic.Critic`: its ``model`` is the
            trained module), ``None`` before :meth:`fit_critic` (or :meth:`build_critic`).
        policy_pairs: The turn pairs the last :meth:`fit` trained the policy on (the
            critic's ranking of the sampled candidates); empty before.
        policy_held_out_pairs: Those it held out (``policy_held_out_fraction``) and
            measured the trained policy on (``train/heldout_reward_accuracy``).

    """

    name = "sweet-rl"
    label = "SWEET-RL"
    config_class = SweetRLConfig
    config: SweetRLConfig

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.critic: Critic | None = None
        self.policy_pairs: list[TurnPair] = []
        self.policy_held_out_pairs: list[TurnPair] = []

    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Fit the critic on trajectory pairs, then the policy on its ranked turn pairs."""
        # Step 1.
        pairs = self.trajectory_pairs(buffer)
        require_items(
            pairs, no_trajectory_pairs(len(buffer), success_only=self.config.pair_success_only)
        )
        train, held_out = split_pairs(
            pairs,
            held_out_fraction=self.config.held_out_fraction,
            seed=self.config.seed,
            rule=self.config.held_out_rule,
        )
        metrics = {
            "critic/num_pairs": float(len(train)),
            "critic/num_heldout_pairs": float(len(held_out)),
        }
        # Step 2.
        metrics.update(self.fit_critic(train))
        if self.trainer.stopped:
            return metrics
        # The critic's fit after training: its loss and accuracy on as many training pairs
        # as there are held-out ones (at least 16), so the two have the same noise (scoring
        # every training pair again took as long as training the critic). The stage's own
        # loss is each batch's before its step: with one epoch, a loss on unseen pairs.
        rng = np.random.default_rng([self.config.seed, 4])
        sample = rng.permutation(len(train))[: max(len(held_out), 16)]
        fit = self.critic_pair_metrics([train[i] for i in sorted(sample)])
        metrics["critic/train_pair_accuracy"] = fit["accuracy"]
        metrics["critic/train_pair_loss"] = fit["loss"]
        if held_out:
            unseen = self.critic_pair_metrics(held_out)
            metrics["critic/heldout_pair_accuracy"] = unseen["accuracy"]
            metrics["critic/heldout_pair_loss"] = unseen["loss"]
        self.log_metrics({k: v for k, v in metrics.items() if "pair_" in k})
        # Steps 3 and 4.
        ranked, dropped = self._candidates(buffer)
        require_items(ranked, _no_turn_pairs(dropped))
        self.policy_pairs, self.policy_held_out_pairs = split_turn_pairs(
            ranked, held_out_fraction=self.config.policy_held_out_fraction, seed=self.config.seed
        )
        metrics["train/num_pairs"] = float(len(self.policy_pairs))
        metrics["train/num_heldout_pairs"] = float(len(self.policy_held_out_pairs))
        metrics.update({f"train/{key}": float(count) for key, count in dropped.items()})
        # Step 5.
        metrics.update(self.fit_policy(self.policy_pairs, held_out=self.policy_held_out_pairs))
        return metrics

    # -- step 1: trajectory pairs --------------------------------------------------------

    def trajectory_pairs(
        self, buffer: TrajectoryBuffer | Sequence[Trajectory]
    ) -> list[TrajectoryPair]:
        """Pair each task's trajectories as ``pair_rule`` says (step 1)."""
        return trajectory_pairs(
            buffer,
            success_only=self.config.pair_success_only,
            min_reward_gap=self.config.min_reward_gap,
            rule=self.config.pair_rule,
        )

    # -- step 2: the critic ----------------------------------------------------------------

    def build_critic(self) -> Critic:
        """Return the critic, built the first time from the config (:func:`make_critic`).

        :meth:`fit_critic` calls it; called before, it gives the critic at its start
        (untrained). It is built from the policy in the form it trains in (with LoRA, an
        adapter on its base; its trainable weights in fp32).
        """
        if self.critic is None:
            self._ready_policy()
            self.critic = make_critic(self)
        return self.critic

    def _as_policy(self) -> AbstractContextManager[Any]:
        """Activate the policy's adapter (LoRA) for the block: candidates come from it."""
        if is_peft_model(self.policy.model):
            return adapter_active(self.policy.model, POLICY_ADAPTER)
        return nullcontext()

    def _hint(self) -> str | None:
        return self.config.hint_template if self.config.critic_uses_reference else None

    def _critic_prompt(
        self, turn: Turn, reference: dict[str, Any], where: str = "critic prompt"
    ) -> str:
        """Return a turn's state as the critic reads it (the hint where the config puts it)."""
        return critic_prompt(
            self.policy,
            turn,
            reference,
            self._hint(),
            where=where,
            hint_position=self.config.hint_position,
        )

    def _critic_dialogue(self, trajectory: Trajectory) -> Dialogue:
        """Return a trajectory's turns as the critic reads them (with the training hint)."""
        where = f"trajectory of task {trajectory.task_id!r}"
        prompts = [
            self._critic_prompt(turn, trajectory.reference, where) for turn in trajectory.turns
        ]
        return Dialogue(prompts, [turn.action for turn in trajectory.turns])

    def _scored_pairs(self, pairs: Sequence[TrajectoryPair]) -> list[DialoguePair]:
        """Each pair's two trajectories as the critic reads them, with the start's values."""
        dialogues = [
            self._critic_dialogue(t) for pair in pairs for t in (pair.chosen, pair.rejected)
        ]
        values = self.build_critic().start_values(dialogues)
        scored = [Dialogue(d.prompts, d.actions, v) for d, v in zip(dialogues, values)]
        return [DialoguePair(scored[i], scored[i + 1]) for i in range(0, len(scored), 2)]

    def _critic_items(self, pairs: Sequence[TrajectoryPair], name: str) -> list[DialoguePair]:
        """:meth:`_scored_pairs`, computed once per run (cached in the run directory)."""
        cached = self.trainer.cached(name, lambda: to_json(self._scored_pairs(pairs)))
        return from_json(DialoguePair, cached)

    def _critic_loss(
        self, model: torch.nn.Module, batch: Any
    ) -> tuple[torch.Tensor, dict[str, float]]:
        chosen, rejected = self.build_critic().pair_scores(model, batch)
        return bradley_terry_loss(chosen, rejected), {
            "pair_accuracy": float((chosen > rejected).float().mean().detach()),
            "score_margin": float((chosen - rejected).mean().detach()),
        }

    def fit_critic(self, pairs: Sequence[TrajectoryPair]) -> dict[str, float]:
        """Train the critic with the Bradley–Terry loss on trajectory pairs (step 2).

        Args:
            pairs: From :meth:`trajectory_pairs` (the training share).

        Returns:
            ``critic/`` metrics averaged over the last epoch.

        """
        require_items(pairs, "fit_critic needs at least one trajectory pair")
        with self._session(_pairs_fingerprint(pairs)):
            critic = self.build_critic()
            items = self._critic_items(pairs, "critic_pairs")
            with critic.active():
                stage = Stage(
                    name="critic",
                    namespace="critic",
                    model=critic.model,
                    items=items,
                    loss=self._critic_loss,
                    learning_rate=self.config.critic_learning_rate,
                    num_epochs=self.config.critic_epochs,
                    batch_size=self.config.critic_batch_size,
                    collate=critic.collate(),
                    save=critic.save_weights,
                    load=critic.load_weights,
                    length=DialoguePair.text_length,
                )
                return self.run_stage(stage)

    def critic_accuracy(self, pairs: Sequence[TrajectoryPair]) -> float:
        """Fraction of pairs whose chosen trajectory the critic scores higher (ties: half).

        Raises:
            RuntimeError: If the critic has not been trained or loaded.

        """
        return self.critic_pair_metrics(pairs)["accuracy"]

    def critic_pair_metrics(self, pairs: Sequence[TrajectoryPair]) -> dict[str, float]:
        """Return the critic's accuracy and mean Bradley–Terry loss on trajectory pairs.

        ``accuracy``: the fraction of pairs whose chosen trajectory scores higher (ties:
        half); ``loss``: the critic's training loss on them (ln 2 = 0.6931 for a critic
        that tells no pair apart). On its training pairs after training, they measure
        its fit; on held-out pairs, what it learnt.

        Raises:
            RuntimeError: If the critic has not been trained or loaded.

        """
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        if not pairs:
            raise ValueError("critic_pair_metrics needs at least one pair")
        critic = self.critic
        with self._session(_pairs_fingerprint(pairs)):
            items = self._scored_pairs(pairs)
            collate = critic.collate()

            def compute(chunk: list[DialoguePair]) -> list[list[float]]:
                with critic.active(), self.trainer.autocast(), torch.no_grad():
                    chosen, rejected = critic.pair_scores(critic.model, collate(chunk))
                wins = (chosen > rejected).float() + 0.5 * (chosen == rejected).float()
                losses = torch.nn.functional.softplus(rejected - chosen).float()
                return [[w, loss] for w, loss in zip(wins.tolist(), losses.tolist())]

            rows = map_sharded(items, compute, batch_size=self.config.critic_batch_size)
            reshard(critic.model)
        return {
            "accuracy": float(sum(w for w, _ in rows) / len(rows)),
            "loss": float(sum(loss for _, loss in rows) / len(rows)),
        }

    def score_actions(
        self, messages: Sequence[dict[str, str]], reference: dict[str, Any], actions: Sequence[str]
    ) -> list[float]:
        """Score candidate actions for one turn with the critic (higher: more promising).

        For the log-ratio critic the score is the turn advantage ``critic_beta x
        (critic - baseline)`` of each action, mean (or summed) token log-probs, the
        baseline the sampling policy (the policy before its step) on its own prompt,
        without the hint, as the official code's. Not collective: under many processes,
        each process scores its own turns.

        Args:
            messages: The turn's context (the chat before the action).
            reference: The trajectory's training-time information.
            actions: Candidate actions.

        Raises:
            RuntimeError: If the critic has not been trained or loaded.

        """
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        return self._score_turns([(messages, reference, list(actions))])[0]

    def turn_advantages(self, trajectory: Trajectory) -> list[float]:
        """Return the trained critic's advantage of each agent turn of one trajectory.

        Turn ``t``'s value is what :meth:`score_actions` gives its action in its context:
        ``critic_beta x`` the mean (or, with ``length_normalize=False``, summed) token
        log-prob ratio of the critic and the sampling policy, the critic reading the
        trajectory's reference as in training (the value head's output for that
        ablation). It does not depend on ``critic_score``. Not collective, like
        :meth:`score_actions`.

        Example:
            >>> algo = Algorithm.load("runs/sweet")
            >>> plt.bar(range(len(t.turns)), algo.turn_advantages(t))

        Args:
            trajectory: The episode; its ``reference`` needs the hint's fields.

        Returns:
            One float per agent turn, in order.

        Raises:
            RuntimeError: If the critic has not been trained or loaded.

        """
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        scores = self._score_turns(
            [(turn.messages, trajectory.reference, [turn.action]) for turn in trajectory.turns]
        )
        return [score for (score,) in scores]

    def _score_turns(
        self, turns: Sequence[tuple[Sequence[dict[str, str]], dict[str, Any], list[str]]]
    ) -> list[list[float]]:
        """Critic scores of each turn's actions (:meth:`algorithms.critic.Critic.score`)."""
        critic = self.critic
        hinted, plain, actions = [], [], []
        for messages, reference, candidates in turns:
            turn = Turn(messages=[dict(m) for m in messages], action="")
            hinted += [self._critic_prompt(turn, reference)] * len(candidates)
            plain += self.policy_prompts([turn]) * len(candidates)
            actions += candidates
        sizes = [len(candidates) for _, _, candidates in turns]
        with torch.no_grad(), self._autocast():
            flat = critic.score(hinted, plain, actions, sizes)
        reshard(critic.model)
        return split_by_lengths(flat, sizes)

    def _autocast(self) -> AbstractContextManager[Any]:
        return self._fit_trainer.autocast() if self._fit_trainer is not None else nullcontext()

    # -- steps 3 and 4: candidates and turn pairs ---------------------------------------------

    def candidate_pairs(self, buffer: TrajectoryBuffer | Sequence[Trajectory]) -> list[TurnPair]:
        """Sample candidates for a share of turns, rank them with the critic, pair them (3-4).

        With ``drop_truncated_candidates`` (default), candidates cut off at
        ``max_new_tokens`` are dropped before scoring (after ``question_turns``, questions
        too): they are neither chosen nor rejected, and a turn left with fewer than two
        candidates gives no pair. The sampling and scoring of the turns are split across
        processes.

        Returns:
            Turn-level pairs (cached in the run directory, so a resumed run does not
            sample again).

        """
        return self._candidates(buffer)[0]

    def _candidates(
        self, buffer: TrajectoryBuffer | Sequence[Trajectory]
    ) -> tuple[list[TurnPair], dict[str, int]]:
        """:meth:`candidate_pairs`, and how many candidates were dropped, by reason."""
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        turns = [(t, turn) for t in buffer for turn in t.turns]
        with self._session([t.to_dict() for t in buffer]):
            data = self.trainer.cached("candidate_pairs", lambda: self._candidate_pairs(turns))
        dropped = {key: int(data[key]) for key in _DROPPED_CANDIDATES}
        return from_json(TurnPair, data["pairs"]), dropped

    def _truncated(self, candidates: Sequence[str]) -> list[bool]:
        """Whether each candidate was (most likely) cut off at ``max_new_tokens``.

        Generation does not report why it stopped, so the decoded text is re-tokenized
        the way it will be trained on; a candidate that ended at the end token is
        shorter than the limit.
        """
        if not candidates:
            return []
        limit = self.config.candidate_max_new_tokens
        if limit is None:
            limit = self.policy.max_new_tokens
        ids = self.policy.tokenizer(list(candidates), add_special_tokens=False)["input_ids"]
        return [len(row) >= limit for row in ids]

    def _candidate_pairs(self, turns: list[tuple[Trajectory, Turn]]) -> dict[str, Any]:
        """Sample, rank and pair the candidates of a share of ``turns`` (JSON, for the cache)."""
        rng = np.random.default_rng([self.config.seed, 3])
        if self.config.question_turns is not None:
            # After question_turns, a turn gives answer pairs only: where the episode answered.
            # Every episode keeps its first turn (a question only follows questions).
            turns = [
                (t, turn)
                for t, turn in turns
                if not self._late(turn) or parse_action(turn.action).is_answer
            ]
        selected = _draw_turns(
            turns, self.config.candidate_fraction, self.config.candidate_selection, rng
        )
        bar = tqdm(
            total=len(selected),
            desc="candidates",
            disable=not (self.config.progress and process_state().is_main_process),
        )

        def rank(chunk: list[tuple[Trajectory, Turn]]) -> list[dict[str, Any]]:
            return [asdict(row) for row in self._rank_candidates(chunk)]  # JSON, for the journal

        try:
            rows = map_sharded(
                selected,
                rank,
                batch_size=self.policy.batch_size,
                journal=self.trainer.journal_dir("candidate_pairs"),
                progress=bar,
            )
        finally:
            bar.close()
        ranked = [_RankedCandidates(**row) for row in rows]
        pairs = []
        for (trajectory, turn), row in zip(selected, ranked):
            pairs += turn_pairs(
                turn.messages,
                row.candidates,
                row.scores,
                num_pairs=self.config.pairs_per_turn,
                rng=rng,
                task_id=trajectory.task_id,
                draw=self.config.pair_draw,
            )
        dropped = {key: sum(row.dropped[key] for row in ranked) for key in _DROPPED_CANDIDATES}
        return {"pairs": to_json(pairs), **dropped}

    def _rank_candidates(self, chunk: list[tuple[Trajectory, Turn]]) -> list[_RankedCandidates]:
        """Sample each turn's candidates, drop the unwanted ones, score the rest with the critic."""
        prompts = self.policy_prompts([turn for _, turn in chunk])
        with self._as_policy():
            sampled = self.policy.generate(
                prompts,
                n=self.config.num_candidates,
                temperature=self.config.candidate_temperature,
                max_new_tokens=self.config.candidate_max_new_tokens,
            )
        # Trained on, a cut-off candidate gets the end token: it would teach the policy to
        # stop mid-answer. Dropped before scoring, it costs nothing.
        flags = [self._unwanted(row, self._late(turn)) for row, (_, turn) in zip(sampled, chunk)]
        kept = [
            [c for c, *drop in zip(row, *row_flags.values()) if not any(drop)]
            for row, row_flags in zip(sampled, flags)
        ]
        scores = self._score_turns(
            [(turn.messages, t.reference, c) for (t, turn), c in zip(chunk, kept)]
        )
        return [
            _RankedCandidates(c, s, {key: sum(drop) for key, drop in row_flags.items()})
            for c, s, row_flags in zip(kept, scores, flags)
        ]

    def _unwanted(self, candidates: Sequence[str], late: bool) -> dict[str, list[bool]]:
        """Which candidates are dropped, by reason (the keys of ``_DROPPED_CANDIDATES``).

        ``late``: the turn comes after ``question_turns``, where only answers make pairs.
        """
        cut = self._truncated(candidates) if self.config.drop_truncated_candidates else []
        answering = [parse_action(c).is_answer for c in candidates]
        return {
            "truncated_candidates": cut or [False] * len(candidates),
            "question_candidates": [late and not a for a in answering],
        }

    def _late(self, turn: Turn) -> bool:
        """Whether ``turn`` comes after the dialogue's first ``question_turns`` turns."""
        last = self.config.question_turns
        if last is None:
            return False
        # The turn's messages are the dialogue before its action: one agent message a turn.
        return sum(1 for message in turn.messages if message.get("role") == "assistant") >= last

    # -- step 5: the policy ----------------------------------------------------------------------

    def _policy_items(self, pairs: Sequence[TurnPair]) -> list[TurnPairItem]:
        """Each pair with its prompt and the frozen policy's summed log-probs (cached)."""

        def compute() -> list[dict[str, Any]]:
            prompts = self.policy.format_prompts([list(p.messages) for p in pairs])
            rows = list(zip(prompts, pairs))

            values = self._policy_pair_sums(
                [(prompt, pair.chosen, pair.rejected) for prompt, pair in rows],
                self.policy_reference,
            )
            return to_json(
                [
                    TurnPairItem(prompt, pair.chosen, pair.rejected, chosen, rejected)
                    for (prompt, pair), (chosen, rejected) in zip(rows, values)
                ]
            )

        return from_json(TurnPairItem, self.trainer.cached("policy_pairs", compute))

    def _policy_pair_sums(
        self,
        rows: Sequence[tuple[str, str, str]],
        context: Any = nullcontext,
    ) -> list[list[float]]:
        """Each (prompt, chosen, rejected)'s two summed log-probs under the policy."""

        def sums(chunk: list[tuple[str, str, str]]) -> list[list[float]]:
            encoded = self._encode_policy_pairs(
                [prompt for prompt, _, _ in chunk],
                [chosen for _, chosen, _ in chunk],
                [rejected for _, _, rejected in chunk],
            )
            with context(), self.trainer.autocast(), torch.no_grad():
                values = turn_logprobs(self.policy.model, encoded).sum.float().tolist()
            return [[values[i], values[i + len(chunk)]] for i in range(len(chunk))]

        return map_sharded(list(rows), sums, batch_size=self.config.batch_size)

    def _held_out_policy_metrics(self, items: Sequence[TurnPairItem]) -> dict[str, float]:
        """Return the trained policy's DPO reward accuracy and loss on held-out turn pairs.

        As the official trainer's evaluation: the implicit reward margin ``beta x`` (the
        policy's minus the reference's log-ratio of chosen to rejected), its share above
        0 (ties: half) and the DPO loss on it.
        """
        sums = self._policy_pair_sums([(i.prompt, i.chosen, i.rejected) for i in items])
        reshard(self.policy.model)
        margins = torch.tensor(
            [
                self.config.dpo_beta
                * ((chosen - item.reference_chosen) - (rejected - item.reference_rejected))
                for (chosen, rejected), item in zip(sums, items)
            ]
        )
        wins = (margins > 0).float() + 0.5 * (margins == 0).float()
        return {
            "train/heldout_reward_accuracy": float(wins.mean()),
            "train/heldout_dpo_loss": float(torch.nn.functional.softplus(-margins).mean()),
        }

    def _encode_policy_pairs(
        self, prompts: Sequence[str], chosen: Sequence[str], rejected: Sequence[str]
    ) -> TokenizedTurns:
        """Tokenize the policy step's pairs: chosen turn ``k``, rejected turn ``n + k``.

        With ``nll_scope="sequence"`` each action is a row of its own whose prompt tokens
        count as the action's (the official trainer has no prompt mask): the NLL term is
        the chosen row's token mean, while the prompt's log-probs, alike in both rows,
        leave the DPO margin as it is.
        """
        if self.config.nll_scope == "sequence":
            return self.encode([*prompts, *prompts], [*chosen, *rejected], whole_sequence=True)
        return self.encode_pairs(prompts, chosen, rejected)

    def _policy_loss(
        self, model: CausalLM, batch: TurnPairBatch
    ) -> tuple[torch.Tensor, dict[str, float]]:
        logps = turn_logprobs(model, batch.turns)
        n = batch.num_pairs
        device = logps.sum.device
        chosen_nll = -logps.mean[:n]
        out = dpo_loss(
            logps.sum[:n],
            logps.sum[n:],
            batch.reference_chosen.to(device),
            batch.reference_rejected.to(device),
            beta=self.config.dpo_beta,
            chosen_nll=chosen_nll,
            nll_coef=self.config.nll_coef,
            dpo_coef=self.config.dpo_coef,
        )
        return out.loss, {
            "reward_accuracy": float(out.reward_accuracy),
            "reward_margin": float(out.reward_margin),
            "chosen_nll": float(-logps.mean[:n].detach().mean()),
        }

    def fit_policy(
        self,
        pairs: Sequence[TurnPair],
        *,
        held_out: Sequence[TurnPair] = (),
        resume: bool = False,
    ) -> dict[str, float]:
        """DPO on turn-level pairs with an NLL term on the chosen action (step 5).

        The frozen reference is the policy as it is when this is called: its log-probs
        are computed once, first, so no second copy of the model is kept.

        Args:
            pairs: From :meth:`candidate_pairs`, or your own :class:`TurnPair` list.
            held_out: Pairs not trained on: their reference log-probs are computed with
                the training pairs', and after the step the trained policy is measured
                on them (``train/heldout_reward_accuracy``, ``train/heldout_dpo_loss``).
            resume: Called on its own (outside :meth:`fit`): keep the step's run in
                ``output_dir`` (checkpoints, the reference log-probs, TensorBoard) and
                continue the run of the same pairs and settings found there. Without
                it, a call on its own keeps nothing on disk.

        Returns:
            ``train/`` metrics averaged over the last epoch.

        Raises:
            ValueError: With ``resume``, if ``output_dir`` holds a run of other pairs or
                settings.

        """
        require_items(pairs, "fit_policy needs at least one turn pair")
        every = [*pairs, *held_out]
        with self._session([p.__dict__ for p in every], resume=resume):
            items = self._policy_items(every)
            stage = self.policy_stage(
                "policy",
                items[: len(pairs)],
                self._policy_loss,
                collate_turn_pairs(self._encode_policy_pairs),
                length=TurnPairItem.text_length,
            )
            metrics = self.run_stage(stage)
            if held_out and not self.trainer.stopped:
                unseen = self._held_out_policy_metrics(items[len(pairs) :])
                self.log_metrics(unseen)
                metrics.update(unseen)
            return metrics

    # -- a comparison's report -----------------------------------------------------------------

    def diagnose(self, context: FitContext) -> Diagnostics:
        """Judge the policy step's turn pairs by the environment; show the critic at work.

        Keeps the turn pairs in ``context.directory`` (:data:`algorithms.controls.TURN_PAIRS`),
        where the controls re-rank them. Reports how many pairs the environment bears out
        (:func:`algorithms.pair_signal.turn_pair_signal`) and the critic's advantages on
        one training dialogue (:func:`algorithms.critic_example.critic_example`).
        """
        from algorithms.critic_example import critic_example, critic_example_table
        from algorithms.pair_signal import pair_signal_summary, pair_signal_text, turn_pair_signal

        pairs = self.policy_pairs
        if process_state().is_main_process:
            context.directory.mkdir(parents=True, exist_ok=True)
            write_turn_pairs(context.directory / TURN_PAIRS, pairs)
        signal = turn_pair_signal(pairs, context.buffer, similarity=context.similarity)
        example = critic_example(self, context.buffer)
        markdown = ""
        if signal["question_pairs"] or signal["answer_pairs"]:
            markdown = pair_signal_text(signal, frontend=context.similarity is not None)
        if example is not None and example["turns"]:
            markdown += "\n### The critic on one dialogue\n\n" + critic_example_table(example)
        return Diagnostics(
            record={"turn_pair_signal": signal, "critic_example": example},
            markdown=markdown,
            summary=pair_signal_summary(signal),
        )

    # -- persistence ----------------------------------------------------------------------------

    def save_components(self, directory: Path, main: bool) -> None:
        """Write the critic (its model or adapter, and its start) beside the policy."""
        if self.critic is not None:
            self.critic.save(directory, main)

    def load_components(self, directory: Path) -> None:
        """Read the critic ``save_components`` wrote."""
        if (directory / "critic").exists():
            self.build_critic().load(directory)


def _draw_turns(
    turns: list[tuple[Trajectory, Turn]],
    fraction: float,
    selection: str,
    rng: np.random.Generator,
) -> list[tuple[Trajectory, Turn]]:
    """Draw the turns that get candidates, in the buffer's order.

    Args:
        turns: The eligible ``(trajectory, turn)`` pairs, a trajectory's turns together.
        fraction: ``selection="turns"``: the share of ``turns`` drawn at random (rounded,
            at least one). ``"trajectories"``: the share of the trajectories they come
            from taken first in order (rounded down, at least one).
        selection: ``"turns"`` or ``"trajectories"`` (:class:`SweetRLConfig`).
        rng: The draw's generator (``"turns"`` only).

    Returns:
        The drawn pairs: with ``"trajectories"``, every eligible turn of each taken one.

    """
    if selection == "turns":
        count = min(len(turns), max(1, round(fraction * len(turns))))
        drawn = set(rng.choice(len(turns), size=count, replace=False).tolist())
        return [pair for index, pair in enumerate(turns) if index in drawn]
    # The first trajectories, as the official script slices its file (told apart by
    # identity: two episodes of one task may be equal).
    order = list(dict.fromkeys(id(trajectory) for trajectory, _ in turns))
    first = set(order[: max(1, int(fraction * len(order)))])
    return [pair for pair in turns if id(pair[0]) in first]


def _no_turn_pairs(dropped: dict[str, int]) -> str:
    """Say why the candidates gave no turn-level pair, and what to change."""
    for key, why in _DROPPED_CANDIDATES.items():
        if dropped[key]:
            return f"no turn-level pairs: {dropped[key]} sampled candidates {why}"
    return (
        "the critic produced no turn-level pairs (every turn's candidates tied); "
        "raise num_candidates or candidate_temperature"
    )


def _pairs_fingerprint(pairs: Sequence[TrajectoryPair]) -> list[Any]:
    return [[p.task_id, p.chosen.to_dict(), p.rejected.to_dict()] for p in pairs]
