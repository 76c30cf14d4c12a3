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
   4 pairs per turn (with ``mixed_pairs=False``, questions, drafts and answers each
   among their own kind).
5. **The policy** (:meth:`SweetRL.fit_policy`): DPO on the turn pairs plus an NLL term on
   the chosen action.

Ablations of the paper are settings: ``critic_uses_reference=False`` (no training-time
information), ``critic_head="value"`` (a scalar value head instead of the log-ratio),
``length_normalize=False`` (summed instead of mean log-probs) and
``critic_score="last_turn"`` (a trajectory scored by its last turn only);
``critic_score="token_mean"`` is the official code's trajectory score.

Many processes: the reference, scoring, sampling and accuracy passes are split across
ranks (:func:`algorithms.distributed.map_sharded`); the critic's frozen start, which is
also the sampling policy that candidates are measured against, is kept (a copy, or with
LoRA the base with adapters disabled), so scores stay right after the policy has been
trained or the algorithm reloaded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from tqdm.auto import tqdm

from agents.loading import load_model
from algorithms.base import Algorithm, require_items
from algorithms.batches import (
    Dialogue,
    DialogueBatch,
    DialoguePair,
    TurnPairBatch,
    TurnPairItem,
    collate_dialogue_pairs,
    collate_turn_pairs,
    from_json,
    split_by_lengths,
    to_json,
)
from algorithms.config import TrainingConfig
from algorithms.critic_inputs import HINT_POSITIONS, REFERENCE_HINT, critic_prompt
from algorithms.distributed import full_state_dict, map_sharded, reshard
from algorithms.fit_context import Diagnostics, FitContext
from algorithms.logprobs import TokenizedTurns, shared_prefix_turn_logprobs, turn_logprobs
from algorithms.lora import (
    POLICY_ADAPTER,
    adapter_active,
    add_adapter,
    is_peft_model,
    load_adapter_weights,
    save_adapter,
)
from algorithms.losses import (
    bradley_terry_loss,
    dpo_loss,
    last_turn_scores,
    token_mean_scores,
    trajectory_scores,
    turn_advantage,
)
from algorithms.models import ValueHeadModel, clone_model, load_weights, save_causal_lm
from algorithms.pairs import (
    TURN_PAIRS,
    TrajectoryPair,
    TurnPair,
    confident_pairs,
    no_trajectory_pairs,
    split_pairs,
    trajectory_pairs,
    turn_pairs,
    write_turn_pairs,
)
from algorithms.trainer import Stage, upcast_trainable
from sweetrl_gym.actions import extract_html, parse_action
from sweetrl_gym.model_types import CausalLM
from sweetrl_gym.processes import process_state
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__all__ = ["SweetRL", "SweetRLConfig"]

_CRITIC_ADAPTER = "critic"

_CRITIC_SCORES = ("turn_sum", "token_mean", "last_turn")
"""Values of :attr:`SweetRLConfig.critic_score`."""

_DROPPED_CANDIDATES = {
    "truncated_candidates": "were cut off at max_new_tokens and dropped, leaving too few "
    "complete ones; raise candidate_max_new_tokens or set drop_truncated_candidates=False",
    "answer_candidates": "answered and were dropped (pair_turns='questions'), leaving too few "
    "questions; raise num_candidates or set pair_turns='all'",
    "question_candidates": "did not answer and were dropped (pair_turns='answers', or a turn "
    "after question_turns), leaving too few answers; raise num_candidates, or set "
    "pair_turns='all' and question_turns=None",
}
"""Why sampled candidates were left out of the turn pairs (counts in the cached pairs), and
what to change when that left no pair."""


@dataclass(frozen=True)
class SweetRLConfig(TrainingConfig):
    """Settings of :class:`SweetRL`.

    Official defaults (the paper and facebookresearch/sweet_rl): ``learning_rate`` and
    ``critic_learning_rate`` 2e-7, ``num_epochs`` 1 (the policy's), ``critic_epochs`` 4,
    ``dpo_beta`` and ``critic_beta`` 0.1, ``nll_coef`` 0.01, the log-ratio critic that
    reads the reference (``hint_template``), ``length_normalize``, ``critic_baseline=
    "policy"``, ``pair_success_only``, ``candidate_fraction`` 0.1, ``num_candidates`` 16 at
    ``candidate_temperature`` 1.0, ``pairs_per_turn`` 4, ``max_grad_norm`` 1.0.

    Not official by default (the ``paper`` configs set the official value; the
    "Reproducing the paper" page says why each differs): ``critic_score`` (official
    ``"token_mean"``), ``held_out_fraction`` (0), ``candidate_selection``
    (``"trajectories"``), ``drop_truncated_candidates`` (False), ``hint_position``
    (``"prefix"``), ``nll_scope``
    (``"sequence"``), ``critic_max_length`` and ``max_length`` (8192, 16384), the batch
    (8 a step), ``adam_betas`` ((0.9, 0.95)), ``lr_scheduler``, ``warmup_ratio`` and
    ``min_lr_ratio`` (``"cosine_with_min_lr"``, 0.03, 0.1).

    Attributes:
        dpo_beta: DPO inverse temperature of the policy update (paper: 0.1).
        nll_coef: Weight of the NLL term on the chosen action (paper: 0.01).
        nll_turns: Which chosen actions the NLL term anchors. ``"all"`` (paper): every
            pair's. ``"answers"``: only the pairs whose chosen action answers (its weight
            on each of them unchanged, the questions' term 0): the anchor keeps the code
            the policy copies, while the critic's chosen questions get the DPO term only,
            not supervised training on them (which moved the decision to answer;
            docs/results.md, run 14).
        dpo_coef: Weight of the DPO term of the policy step (paper: 1). 0 leaves the NLL
            term alone: supervised training on the chosen candidates (the
            ``sweet-rl-nll`` control of ``sweetrl compare``).
        critic_learning_rate: The critic's step size (paper: 2e-7).
        critic_epochs: Passes over the trajectory pairs (paper: 4).
        critic_beta: Scale of the turn advantage (paper: 0.1).
        critic_batch_size: Trajectory pairs per critic forward pass (each pair is two
            sequences, one per dialogue).
        critic_uses_reference: Give the critic the training-time information (the
            paper's asymmetry); ``False`` is the ablation without it.
        critic_baseline: What a candidate action's critic log-prob is measured against
            when candidates are ranked (and in :meth:`SweetRL.score_actions` and
            :meth:`SweetRL.turn_advantages`). ``"policy"`` (the official code): the
            sampling policy's mean log-prob of the action on its own prompt, without the
            hint, so the score holds what the hint makes likelier as well as what the
            critic learnt. ``"start"``: the critic's frozen start reading the same hinted
            prompt, so only what training changed counts (the critic's Bradley–Terry
            loss always uses this one). With a separate ``critic_model`` and full
            fine-tuning, ``"policy"`` after the policy step is the trained policy (its
            start is not kept). The value head has no baseline (it ignores this).
        critic_head: ``"log_ratio"`` (the paper's parameterisation) or ``"value"`` (the
            ablation: a scalar head on the critic LM, trained with the same loss).
        length_normalize: Mean (paper) or summed token log-probs in the advantage (the
            paper's ablation without the mean collapsed).
        critic_score: How the critic scores a trajectory for its Bradley–Terry loss
            (and :meth:`SweetRL.critic_accuracy`). ``"turn_sum"`` (default; the paper's
            description): the sum of the per-turn advantages, so each turn weighs the
            same whatever its length. ``"token_mean"`` (the official code: its DPO
            trainer's mean log-prob over every assistant token of the dialogue): one
            mean over all the trajectory's action tokens, so long turns weigh more; use
            it to reproduce the official critic. ``"last_turn"``: the last turn's
            advantage only (an ablation). ``"sum"`` is read as ``"turn_sum"`` (configs
            saved before the rename). Whichever it is, a turn's advantage (what ranks
            candidates and :meth:`SweetRL.turn_advantages` returns) stays the turn's
            scaled mean log-ratio. ``"token_mean"`` needs ``length_normalize=True`` (it is
            a length normalisation) and ``critic_head="log_ratio"`` (a value head gives
            no per-token values).
        hint_template: How the training-time information is put in words; fields
            name keys of ``Trajectory.reference`` or fields derived from them
            (:func:`algorithms.critic_inputs.hint_fields`). Paper: the ground-truth
            answer (:data:`~algorithms.critic_inputs.REFERENCE_HINT`); on the Backend,
            :data:`~algorithms.critic_inputs.FACTS_HINT` names the facts instead.
        hint_position: Where the critic reads the hint. ``"system"`` (default): at the
            end of the system prompt, so the chat template starts as the policy's does.
            ``"prefix"`` (official: its scripts prepend the sentence to the formatted
            prompt): before everything, the template's start token included.
        critic_model: A hub id, local folder or ``"default"`` of a causal LM to start the
            critic from (:func:`agents.loading.load_model`; it must use the policy's
            tokenizer); ``None``: the policy's model (paper; with LoRA, a second adapter
            on it).
        critic_max_length: Longest row the critic reads, in training and scoring
            (official: 8192, the policy's 16384); ``None``: ``max_length``.
        nll_scope: What the NLL term averages over. ``"action"`` (default): the chosen
            action's tokens. ``"sequence"`` (official: its DPO trainer, given pairs with
            no prompt key, masks nothing): the whole chosen row, prompt included, so the
            anchor on the action weighs about action / row length as much and the term
            also fits the prompt. Ours anchors what the policy says, not what it reads.
        pair_success_only: Build trajectory pairs only from tasks with a success (paper).
        min_reward_gap: A rejected trajectory must score lower by more than this.
        held_out_fraction: Share of tasks whose pairs are held out to measure the
            critic's pairwise accuracy (not trained on).
        candidate_fraction: Share of the buffer's turns that get candidates (paper: 10%);
            with ``candidate_selection="trajectories"``, share of its trajectories.
        candidate_selection: What ``candidate_fraction`` draws. ``"turns"`` (default,
            the paper's text): that share of all the buffer's turns, drawn at random.
            ``"trajectories"`` (official: ``sample_best_of_n.py --data_fraction``): the
            buffer's first trajectories in order, that share of them (rounded down),
            every turn of each getting candidates.
        num_candidates: Actions sampled per selected turn (paper: 16).
        candidate_temperature: Sampling temperature of the candidates (paper: 1.0).
        candidate_max_new_tokens: Longest candidate; ``None``: the policy's setting.
        drop_truncated_candidates: Leave candidates that were cut off at
            ``max_new_tokens`` out of the turn pairs (neither chosen nor rejected): the
            policy is trained on an action followed by the end-of-turn token, which would
            teach it to stop mid-answer. A candidate counts as cut off when it
            re-tokenizes to at least ``max_new_tokens`` tokens (a sample whose decoded
            text re-tokenizes shorter slips through). ``False`` keeps them (needed for
            tiny random-init policies, whose samples never end).
        pairs_per_turn: Turn-level pairs drawn per turn, top half vs bottom half
            (paper: 4).
        pair_turns: Which actions make turn-level pairs. ``"all"`` (paper): every
            sampled candidate. ``"questions"``: only the turns where the buffer's episode
            asked get candidates, and candidates that answer (``I WANT TO ANSWER:``) are
            dropped before scoring: DPO shapes only what the policy asks and when, never
            the decision to answer (a critic that favours questions then teaches the
            policy to keep asking; see docs/results.md). ``"answers"``: the mirror image,
            only the turns where the episode answered, only answering candidates: DPO
            shapes the answer's content where the policy already answers.
        question_turns: The last turn (counted from 1) of a dialogue whose question
            candidates make pairs; ``None`` (paper): every turn. After it, only the turns
            where the episode answered get candidates, and their question candidates are
            dropped: the pairs there are answers against answers. For a critic that
            orders early questions better than late ones (docs/results.md).
        mixed_pairs: Pair a question with an answer sampled at the same turn (paper).
            ``False``: a turn's candidates are paired only within their kind (each kind
            ranked and halved on its own, the turn's ``pairs_per_turn`` shared in
            proportion to the kinds' counts): questions, answers, and on the Frontend
            drafts (a page shown without answering). No pair sets asking against
            answering, or a draft against a question. The NLL and DPO terms on same-kind
            pairs can still move the decision to answer (docs/results.md, run 13).
        pair_gap_quantile: Keep only the turn pairs whose critic score gap is at least
            this quantile of the gaps of their kind (two questions, two answers, two
            drafts, or two of different kinds); 0 (paper) keeps every pair, 0.5 the wider
            half of each kind. For a critic surer of its wide-gap pairs than of its
            near-ties (what it gave: docs/results.md, run 21); raise ``pairs_per_turn`` to
            keep the step's size.

    """

    dpo_beta: float = 0.1
    nll_coef: float = 0.01
    nll_turns: str = "all"
    dpo_coef: float = 1.0
    critic_learning_rate: float = 2e-7
    critic_epochs: int = 4
    critic_beta: float = 0.1
    critic_batch_size: int = 1
    critic_uses_reference: bool = True
    critic_head: str = "log_ratio"
    critic_baseline: str = "policy"
    length_normalize: bool = True
    critic_score: str = "turn_sum"
    hint_template: str = REFERENCE_HINT
    hint_position: str = "system"
    critic_model: str | None = None
    critic_max_length: int | None = None
    nll_scope: str = "action"
    pair_success_only: bool = True
    min_reward_gap: float = 0.0
    held_out_fraction: float = 0.1
    candidate_fraction: float = 0.1
    candidate_selection: str = "turns"
    num_candidates: int = 16
    candidate_temperature: float = 1.0
    candidate_max_new_tokens: int | None = None
    drop_truncated_candidates: bool = True
    pairs_per_turn: int = 4
    pair_turns: str = "all"
    question_turns: int | None = None
    mixed_pairs: bool = True
    pair_gap_quantile: float = 0.0

    LATER_SETTINGS: ClassVar[dict[str, Any]] = {
        "question_turns": None,
        "pair_gap_quantile": 0.0,
        "candidate_selection": "turns",
    }

    def __post_init__(self) -> None:
        if self.critic_score == "sum":  # the name before "token_mean" existed
            object.__setattr__(self, "critic_score", "turn_sum")
        super().__post_init__()
        self._check_positive("dpo_beta", "critic_learning_rate", "critic_epochs", "critic_beta")
        self._check_positive("critic_batch_size", "pairs_per_turn")
        self._check_non_negative("nll_coef", "dpo_coef", "min_reward_gap", "candidate_temperature")
        if self.dpo_coef == 0 and self.nll_coef == 0:
            raise ValueError("dpo_coef and nll_coef are both 0: the policy step has no loss")
        self._check_fraction("candidate_fraction")
        self._check_choice("critic_head", ("log_ratio", "value"))
        self._check_choice("nll_turns", ("all", "answers"))
        self._check_choice("nll_scope", ("action", "sequence"))
        self._check_choice("hint_position", HINT_POSITIONS)
        if self.critic_max_length is not None:
            self._check_positive("critic_max_length")
        if self.nll_scope == "sequence" and self.nll_turns != "all":
            raise ValueError(
                "nll_scope='sequence' (the official row-wide NLL) anchors every pair; it "
                f"needs nll_turns='all', got {self.nll_turns!r}"
            )
        self._check_choice("critic_baseline", ("policy", "start"))
        self._check_choice("critic_score", _CRITIC_SCORES)
        self._check_choice("pair_turns", ("all", "questions", "answers"))
        self._check_choice("candidate_selection", ("turns", "trajectories"))
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
        if not 0.0 <= self.pair_gap_quantile < 1.0:
            raise ValueError(f"pair_gap_quantile must be in [0, 1), got {self.pair_gap_quantile}")
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
        critic: The trained critic (a causal LM; a :class:`ValueHeadModel` for the
            value-head ablation; with LoRA, the policy's model, whose ``"critic"``
            adapter is the critic); ``None`` before :meth:`fit_critic`.
        policy_pairs: The turn pairs the last :meth:`fit` trained the policy on (the
            critic's ranking of the sampled candidates); empty before.

    """

    name = "sweet-rl"
    label = "SWEET-RL"
    config_class = SweetRLConfig
    config: SweetRLConfig

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.critic: CausalLM | ValueHeadModel | None = None
        self.policy_pairs: list[TurnPair] = []
        # The critic's frozen start: a model, or None while it is the policy's untrained
        # model (with LoRA: always, as the base with adapters disabled).
        self._critic_start: CausalLM | None = None

    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Fit the critic on trajectory pairs, then the policy on its ranked turn pairs."""
        # Step 1.
        pairs = self.trajectory_pairs(buffer)
        require_items(
            pairs, no_trajectory_pairs(len(buffer), success_only=self.config.pair_success_only)
        )
        train, held_out = split_pairs(
            pairs, held_out_fraction=self.config.held_out_fraction, seed=self.config.seed
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
        self.policy_pairs, dropped = self._candidates(buffer)
        metrics["train/num_pairs"] = float(len(self.policy_pairs))
        metrics.update({f"train/{key}": float(count) for key, count in dropped.items()})
        require_items(self.policy_pairs, _no_turn_pairs(dropped))
        # Step 5.
        metrics.update(self.fit_policy(self.policy_pairs))
        return metrics

    # -- step 1: trajectory pairs --------------------------------------------------------

    def trajectory_pairs(
        self, buffer: TrajectoryBuffer | Sequence[Trajectory]
    ) -> list[TrajectoryPair]:
        """Pair each task's best trajectory with every strictly worse one (step 1)."""
        return trajectory_pairs(
            buffer,
            success_only=self.config.pair_success_only,
            min_reward_gap=self.config.min_reward_gap,
        )

    # -- step 2: the critic ----------------------------------------------------------------

    def _ensure_critic(self) -> CausalLM | ValueHeadModel:
        """Build the critic (and keep its frozen start) the first time; return it."""
        if self.critic is not None:
            return self.critic
        config = self.config
        if config.critic_model is None and config.lora_rank:
            self.policy.model = add_adapter(self.policy.model, _CRITIC_ADAPTER, config)
            self.critic = self.policy.model  # start = the base, adapters disabled
            return self.critic
        if config.critic_model is None:
            lm = clone_model(self.policy.model)  # its start: the policy, until that trains
        else:
            lm = load_model(config.critic_model, what="critic_model")
            lm.to(next(self.policy.model.parameters()).device)
            upcast_trainable(lm)  # its start computes as the trained copy will (_ready_policy)
            self._critic_start = clone_model(lm)
            self._critic_start.requires_grad_(False)
        self.critic = ValueHeadModel(lm, 1) if config.critic_head == "value" else lm
        return self.critic

    def _as_critic(self) -> AbstractContextManager[Any]:
        """Activate the critic's adapter (LoRA) for the block."""
        if is_peft_model(self.critic):
            return adapter_active(self.critic, _CRITIC_ADAPTER)
        return nullcontext()

    def _as_policy(self) -> AbstractContextManager[Any]:
        """Activate the policy's adapter (LoRA) for the block: candidates come from it."""
        if is_peft_model(self.policy.model):
            return adapter_active(self.policy.model, POLICY_ADAPTER)
        return nullcontext()

    def _critic_start_model(self) -> tuple[CausalLM, Callable[[], AbstractContextManager[Any]]]:
        """Return the critic's frozen start and a maker of the context to run it in."""
        if is_peft_model(self.critic):
            critic = self.critic
            return critic, lambda: adapter_active(critic, None)
        if self._critic_start is None:
            return self.policy.model, self.policy_reference
        return self._critic_start, nullcontext

    @property
    def _critic_length(self) -> int:
        """The longest row the critic reads (``critic_max_length``, else ``max_length``)."""
        return self.config.critic_max_length or self.config.max_length

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

    def _per_turn(self, logps: Any) -> torch.Tensor:
        return logps.mean if self.config.length_normalize else logps.sum

    def _start_values(self, dialogues: Sequence[Dialogue]) -> list[list[float]]:
        """Each turn's log-prob under the critic's frozen start, split across processes."""
        if self.config.critic_head == "value":
            return [[0.0] * len(d.actions) for d in dialogues]
        model, context = self._critic_start_model()
        return self.frozen_turn_logprobs(
            model,
            dialogues,
            context=context,
            mean=self.config.length_normalize,
            max_length=self._critic_length,
        )

    def _scored_pairs(self, pairs: Sequence[TrajectoryPair]) -> list[DialoguePair]:
        """Each pair's two trajectories as the critic reads them, with the start's values."""
        dialogues = [
            self._critic_dialogue(t) for pair in pairs for t in (pair.chosen, pair.rejected)
        ]
        values = self._start_values(dialogues)
        scored = [Dialogue(d.prompts, d.actions, v) for d, v in zip(dialogues, values)]
        return [DialoguePair(scored[i], scored[i + 1]) for i in range(0, len(scored), 2)]

    def _critic_items(self, pairs: Sequence[TrajectoryPair], name: str) -> list[DialoguePair]:
        """:meth:`_scored_pairs`, computed once per run (cached in the run directory)."""
        cached = self.trainer.cached(name, lambda: to_json(self._scored_pairs(pairs)))
        return from_json(DialoguePair, cached)

    def _turn_values(
        self,
        model: CausalLM | ValueHeadModel,
        batch: DialogueBatch,
        score: Callable[..., Any] = turn_logprobs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per-turn critic values and action token counts (``None`` for the value head).

        The values are the turn advantages (log-ratio, the log-probs from ``score``) or
        the value head's outputs.
        """
        device = next(model.parameters()).device
        if self.config.critic_head == "value":
            encoded = batch.turns.to(device)
            return model(encoded.input_ids, encoded.attention_mask)[:, 0], None
        logps = score(model, batch.turns)
        values = self._per_turn(logps)
        advantages = turn_advantage(
            values, batch.reference.to(values.device), beta=self.config.critic_beta
        )
        return advantages, logps.num_tokens

    def _collate_critic(self) -> Any:
        if self.config.critic_head == "value":
            # The value head reads each turn's last token: one row per turn.
            def encode(dialogues: Sequence[tuple[Sequence[str], Sequence[str]]]) -> Any:
                prompts = [p for ps, _ in dialogues for p in ps]
                actions = [a for _, acts in dialogues for a in acts]
                return self.encode(prompts, actions, max_length=self._critic_length)

            return collate_dialogue_pairs(encode)
        return collate_dialogue_pairs(
            lambda dialogues: self.encode_dialogues(dialogues, max_length=self._critic_length)
        )

    def _pair_scores(
        self, model: CausalLM | ValueHeadModel, batch: DialogueBatch
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Scores of each pair's chosen (even dialogues) and rejected (odd) side."""
        values, num_tokens = self._turn_values(model, batch)
        index = batch.dialogue_index.to(values.device)
        if self.config.critic_score == "token_mean":
            # The config guarantees the log-ratio head: counts exist, values are means.
            assert num_tokens is not None
            scores = token_mean_scores(values, num_tokens, index, batch.num_dialogues)
        elif self.config.critic_score == "last_turn":
            scores = last_turn_scores(values, index, batch.num_dialogues)
        else:
            scores = trajectory_scores(values, index, batch.num_dialogues)
        return scores[0::2], scores[1::2]

    def _critic_loss(
        self, model: CausalLM | ValueHeadModel, batch: DialogueBatch
    ) -> tuple[torch.Tensor, dict[str, float]]:
        chosen, rejected = self._pair_scores(model, batch)
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
            critic = self._ensure_critic()
            items = self._critic_items(pairs, "critic_pairs")
            with self._as_critic():
                stage = Stage(
                    name="critic",
                    namespace="critic",
                    model=critic,
                    items=items,
                    loss=self._critic_loss,
                    learning_rate=self.config.critic_learning_rate,
                    num_epochs=self.config.critic_epochs,
                    batch_size=self.config.critic_batch_size,
                    collate=self._collate_critic(),
                    save=_save_critic,
                    load=lambda directory: _load_critic(critic, directory),
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
        with self._session(_pairs_fingerprint(pairs)):
            items = self._scored_pairs(pairs)
            collate = self._collate_critic()

            def compute(chunk: list[DialoguePair]) -> list[list[float]]:
                with self._as_critic(), self.trainer.autocast(), torch.no_grad():
                    chosen, rejected = self._pair_scores(self.critic, collate(chunk))
                wins = (chosen > rejected).float() + 0.5 * (chosen == rejected).float()
                losses = torch.nn.functional.softplus(rejected - chosen).float()
                return [[w, loss] for w, loss in zip(wins.tolist(), losses.tolist())]

            rows = map_sharded(items, compute, batch_size=self.config.critic_batch_size)
            reshard(self.critic)
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
        baseline set by ``critic_baseline`` (default: the sampling policy without the
        hint). Not collective: under many processes, each process scores its own turns.

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
        log-prob ratio of the critic and its baseline (``critic_baseline``), the critic
        reading the trajectory's reference as in training (the value head's output for
        that ablation). It does not depend on ``critic_score``; with
        ``critic_baseline="start"`` these are the terms that ``critic_score`` combines into
        the trajectory's score in the critic's loss. Not collective, like
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
        """Critic scores of each turn's actions.

        The log-ratio critic scores one turn's actions together, reading their shared
        prompt (with the hint: most of the tokens) once per model; the baseline
        (``critic_baseline``) reads its own prompt the same way. The value head reads
        every row whole, in micro-batches of ``batch_size`` rows.
        """
        # The unhinted prompt is read only by the policy baseline of the log-ratio critic.
        unhinted = self.config.critic_head != "value" and self.config.critic_baseline == "policy"
        hinted, plain, actions = [], [], []
        for messages, reference, candidates in turns:
            turn = Turn(messages=[dict(m) for m in messages], action="")
            hinted += [self._critic_prompt(turn, reference)] * len(candidates)
            if unhinted:
                plain += self.policy_prompts([turn]) * len(candidates)
            actions += candidates
        if self.config.critic_head == "value":
            size = self.config.batch_size
            chunks = [(i, min(i + size, len(actions))) for i in range(0, len(actions), size)]
        else:
            ends = np.cumsum([len(candidates) for _, _, candidates in turns]).tolist()
            chunks = [(a, b) for a, b in zip([0, *ends[:-1]], ends) if b > a]
        flat: list[float] = []
        for begin, stop in chunks:
            encoded = self.encode(
                hinted[begin:stop], actions[begin:stop], max_length=self._critic_length
            )
            rows = len(encoded)
            with torch.no_grad(), self._autocast():
                if self.config.critic_head == "value":
                    reference = torch.zeros(rows)
                else:
                    reference = self._baseline(plain[begin:stop], actions[begin:stop], encoded)
                batch = DialogueBatch(encoded, torch.arange(rows), reference.cpu(), rows)
                with self._as_critic():
                    values = self._turn_values(self.critic, batch, shared_prefix_turn_logprobs)
                flat += values[0].float().tolist()
        reshard(self.critic)
        return split_by_lengths(flat, [len(candidates) for _, _, candidates in turns])

    def _baseline(
        self, plain: Sequence[str], actions: Sequence[str], hinted: TokenizedTurns
    ) -> torch.Tensor:
        """Each action's log-prob that its critic log-prob is measured against.

        ``critic_baseline="policy"``: the sampling policy (the policy before its step) on
        its own, unhinted, prompts; ``"start"``: the critic's frozen start on the hinted
        rows already encoded.
        """
        if self.config.critic_baseline == "start":
            model, context = self._critic_start_model()
            rows = hinted
        else:
            rows = self.encode(plain, actions, max_length=self._critic_length)
            if self.config.critic_model is None:
                # The critic's start is a kept copy of the policy before its step.
                model, context = self._critic_start_model()
            else:
                model, context = self.policy.model, self.policy_reference
        with context():
            logps = shared_prefix_turn_logprobs(model, rows)
        return self._per_turn(logps).float()

    def _autocast(self) -> AbstractContextManager[Any]:
        return self._fit_trainer.autocast() if self._fit_trainer is not None else nullcontext()

    # -- steps 3 and 4: candidates and turn pairs ---------------------------------------------

    def candidate_pairs(self, buffer: TrajectoryBuffer | Sequence[Trajectory]) -> list[TurnPair]:
        """Sample candidates for a share of turns, rank them with the critic, pair them (3-4).

        With ``drop_truncated_candidates`` (default), candidates cut off at
        ``max_new_tokens`` are dropped before scoring (with ``pair_turns="questions"``,
        answers too; with ``"answers"``, questions): they are neither chosen nor
        rejected, and a turn left with fewer than two candidates gives no pair. The
        sampling and scoring of the turns are split across processes. With
        ``pair_gap_quantile``, only the pairs of widest critic score gap are kept
        (:func:`algorithms.pairs.confident_pairs`).

        Returns:
            Turn-level pairs (cached in the run directory, so a resumed run does not
            sample again).

        """
        return self._candidates(buffer)[0]

    def _candidates(
        self, buffer: TrajectoryBuffer | Sequence[Trajectory]
    ) -> tuple[list[TurnPair], dict[str, int]]:
        """:meth:`candidate_pairs`, and how many candidates (and pairs) were dropped, by reason.

        The cache keeps every pair; ``pair_gap_quantile`` is applied to what it holds.
        """
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        turns = [(t, turn) for t in buffer for turn in t.turns]
        with self._session([t.to_dict() for t in buffer]):
            data = self.trainer.cached("candidate_pairs", lambda: self._candidate_pairs(turns))
        if isinstance(data, list):  # a run cached before truncated candidates were dropped
            data = {"pairs": data, "truncated_candidates": 0}
        dropped = {key: int(data.get(key, 0)) for key in _DROPPED_CANDIDATES}
        pairs = from_json(TurnPair, data["pairs"])
        if self.config.pair_gap_quantile > 0 and pairs:
            kinds = [_pair_kind(pair) for pair in pairs]
            kept = confident_pairs(pairs, kinds, self.config.pair_gap_quantile)
            dropped["low_gap_pairs"] = len(pairs) - len(kept)
            pairs = kept
        return pairs, dropped

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
        kind = self.config.pair_turns
        if kind != "all":
            turns = [
                (t, turn)
                for t, turn in turns
                if parse_action(turn.action).is_answer == (kind == "answers")
            ]
            require_items(
                turns,
                f"pair_turns={kind!r} but no turn of the buffer "
                + (
                    "answers"
                    if kind == "answers"
                    else "asks a question (every episode answered at once)"
                )
                + "; set pair_turns='all'",
            )
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

        def rank(chunk: list[tuple[Trajectory, Turn]]) -> list[_RankedCandidates]:
            ranked = self._rank_candidates(chunk)
            bar.update(len(chunk) * self.trainer.accelerator.num_processes)
            return ranked

        ranked = map_sharded(selected, rank, batch_size=self.policy.batch_size)
        bar.close()
        pairs = []
        for (trajectory, turn), row in zip(selected, ranked):
            kinds = None
            if not self.config.mixed_pairs:
                kinds = [_action_kind(c) for c in row.candidates]
            pairs += turn_pairs(
                turn.messages,
                row.candidates,
                row.scores,
                num_pairs=self.config.pairs_per_turn,
                rng=rng,
                task_id=trajectory.task_id,
                groups=kinds,
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
        kind = self.config.pair_turns
        cut = self._truncated(candidates) if self.config.drop_truncated_candidates else []
        answering = [parse_action(c).is_answer for c in candidates]
        answers_only = kind == "answers" or late
        return {
            "truncated_candidates": cut or [False] * len(candidates),
            "answer_candidates": [kind == "questions" and a for a in answering],
            "question_candidates": [answers_only and not a for a in answering],
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

            def reference(chunk: list[tuple[str, TurnPair]]) -> list[list[float]]:
                encoded = self._encode_policy_pairs(
                    [p for p, _ in chunk],
                    [pair.chosen for _, pair in chunk],
                    [pair.rejected for _, pair in chunk],
                )
                with self.policy_reference(), self.trainer.autocast(), torch.no_grad():
                    sums = turn_logprobs(self.policy.model, encoded).sum.float().tolist()
                return [[sums[i], sums[i + len(chunk)]] for i in range(len(chunk))]

            values = map_sharded(rows, reference, batch_size=self.config.batch_size)
            return to_json(
                [
                    TurnPairItem(prompt, pair.chosen, pair.rejected, chosen, rejected)
                    for (prompt, pair), (chosen, rejected) in zip(rows, values)
                ]
            )

        return from_json(TurnPairItem, self.trainer.cached("policy_pairs", compute))

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
        if self.config.nll_turns == "answers":
            chosen_nll = chosen_nll * batch.chosen_answers.to(device, chosen_nll.dtype)
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

    def fit_policy(self, pairs: Sequence[TurnPair], *, resume: bool = False) -> dict[str, float]:
        """DPO on turn-level pairs with an NLL term on the chosen action (step 5).

        The frozen reference is the policy as it is when this is called: its log-probs
        are computed once, first, so no second copy of the model is kept.

        Args:
            pairs: From :meth:`candidate_pairs`, or your own :class:`TurnPair` list.
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
        with self._session([p.__dict__ for p in pairs], resume=resume):
            items = self._policy_items(pairs)
            self._keep_critic_start()
            stage = self.policy_stage(
                "policy",
                items,
                self._policy_loss,
                collate_turn_pairs(self._encode_policy_pairs),
                length=TurnPairItem.text_length,
            )
            return self.run_stage(stage)

    def _keep_critic_start(self) -> None:
        """Copy the critic's start before the policy (which it is, until now) is trained."""
        if (
            self.critic is not None
            and self._critic_start is None
            and not is_peft_model(self.critic)
        ):
            self._critic_start = clone_model(self.policy.model)
            self._critic_start.requires_grad_(False)

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
        """Write the critic (its model or adapter) beside the policy."""
        if self.critic is None:
            return
        if is_peft_model(self.critic):
            state = full_state_dict(self.critic)
            if main:
                save_adapter(self.critic, _CRITIC_ADAPTER, state, directory / "critic")
            return
        self._keep_critic_start()
        state = full_state_dict(self.critic)
        start = full_state_dict(self._critic_start)
        if main:
            _save_critic(self.critic, state, directory / "critic")
            save_causal_lm(self._critic_start, start, directory / "critic_start")

    def load_components(self, directory: Path) -> None:
        """Read the critic ``save_components`` wrote."""
        if not (directory / "critic").exists():
            return
        critic = self._ensure_critic()
        if self.config.critic_model is None and self.config.lora_rank:
            load_adapter_weights(critic, _CRITIC_ADAPTER, directory / "critic")
            self.policy.model.set_adapter(POLICY_ADAPTER)
            return
        _load_critic(critic, directory / "critic")
        if (directory / "critic_start").exists():
            if self._critic_start is None:
                self._critic_start = clone_model(self.policy.model)
                self._critic_start.requires_grad_(False)
            load_weights(self._critic_start, directory / "critic_start")


def _save_critic(
    model: CausalLM | ValueHeadModel, state_dict: dict[str, Any], directory: Path
) -> None:
    if is_peft_model(model):
        save_adapter(model, _CRITIC_ADAPTER, state_dict, directory)
    elif isinstance(model, ValueHeadModel):
        model.save(state_dict, directory)
    else:
        save_causal_lm(model, state_dict, directory)


def _load_critic(model: CausalLM | ValueHeadModel, directory: Path) -> None:
    if is_peft_model(model):
        load_adapter_weights(model, _CRITIC_ADAPTER, directory)
    elif isinstance(model, ValueHeadModel):
        model.load(directory)
    else:
        load_weights(model, directory)


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


def _action_kind(action: str) -> str:
    """Return ``"answer"``, ``"draft"`` (a page shown without answering) or ``"question"``."""
    if parse_action(action).is_answer:
        return "answer"
    return "draft" if extract_html(action) is not None else "question"


def _pair_kind(pair: TurnPair) -> str:
    """Return ``"questions"``, ``"answers"``, ``"drafts"`` or ``"mixed"``: what it pairs."""
    kinds = {_action_kind(pair.chosen), _action_kind(pair.rejected)}
    return f"{kinds.pop()}s" if len(kinds) == 1 else "mixed"


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
