"""SWEET-RL (Zhou et al. 2025, arXiv 2503.15478): an asymmetric critic ranks turns.

The steps, each a public method usable on its own:

1. :meth:`SweetRL.trajectory_pairs`: per task, the best trajectory vs each strictly
   worse one (tasks with a success only, by default).
2. :meth:`SweetRL.fit_critic`: a causal LM that also reads the training-time
   information (the reference solution) scores each turn by
   ``beta x (mean log-prob under the critic - mean log-prob under its frozen start)``;
   a Bradley–Terry loss makes the chosen trajectory's summed turn advantages beat the
   rejected one's. :meth:`SweetRL.critic_accuracy` measures it on held-out pairs.
3. :meth:`SweetRL.candidate_pairs`: for a fraction of the buffer's turns, sample ``n``
   actions from the policy, score them with the critic, and pair a top-half action
   with a bottom-half one (4 pairs per turn).
4. :meth:`SweetRL.fit_policy`: DPO on those turn-level pairs plus an NLL term on the
   chosen action.

Ablations of the paper are settings: ``critic_uses_reference=False`` (no training-time
information), ``critic_head="value"`` (a scalar value head instead of the log-ratio),
``length_normalize=False`` (summed instead of mean log-probs) and
``critic_score="last_turn"`` (the official code's last-turn variant).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from algorithms.base import Algorithm
from algorithms.config import TrainingConfig
from algorithms.critic_inputs import REFERENCE_HINT, critic_prompt
from algorithms.logprobs import turn_logprobs
from algorithms.losses import (
    bradley_terry_loss,
    dpo_loss,
    last_turn_scores,
    trajectory_scores,
    turn_advantage,
)
from algorithms.models import ValueHeadModel, clone_model, load_weights, save_causal_lm
from algorithms.pairs import TrajectoryPair, TurnPair, split_pairs, trajectory_pairs, turn_pairs
from algorithms.trainer import Stage
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__all__ = ["SweetRL", "SweetRLConfig"]


@dataclass(frozen=True)
class SweetRLConfig(TrainingConfig):
    """Settings of :class:`SweetRL`; the defaults are the paper's (COLBENCH.md).

    The inherited ``learning_rate`` (2e-7) and ``num_epochs`` (1) are the policy's.

    Attributes:
        dpo_beta: DPO inverse temperature of the policy update (paper: 0.1).
        nll_coef: Weight of the NLL term on the chosen action (paper: 0.01).
        critic_learning_rate: The critic's step size (paper: 2e-7).
        critic_epochs: Passes over the trajectory pairs (paper: 4).
        critic_beta: Scale of the turn advantage (paper: 0.1).
        critic_batch_size: Trajectory pairs per critic forward pass (each pair brings
            all of its turns, up to 20).
        critic_uses_reference: Give the critic the training-time information (the
            paper's asymmetry); ``False`` is the ablation without it.
        critic_head: ``"log_ratio"`` (the paper's parameterisation) or ``"value"`` (the
            ablation: a scalar head on the critic LM, trained with the same loss).
        length_normalize: Mean (paper) or summed token log-probs in the advantage; the
            paper reports that success collapsed to 3.6% without the mean.
        critic_score: How turn advantages make a trajectory's score: ``"sum"`` (paper)
            or ``"last_turn"`` (the official code's variant).
        hint_template: How the training-time information is put in words; fields
            name keys of ``Trajectory.reference`` (paper: the ground-truth answer).
        critic_model: Local path of a causal LM to start the critic from (it must use
            the policy's tokenizer); ``None``: a copy of the policy (paper).
        pair_success_only: Build trajectory pairs only from tasks with a success (paper).
        min_reward_gap: A rejected trajectory must score lower by more than this.
        held_out_fraction: Share of tasks whose pairs are held out to measure the
            critic's pairwise accuracy (not trained on).
        candidate_fraction: Share of the buffer's turns that get candidates (paper: 10%).
        num_candidates: Actions sampled per selected turn (paper: 16).
        candidate_temperature: Sampling temperature of the candidates (paper: 1.0).
        candidate_max_new_tokens: Longest candidate; ``None``: the policy's setting.
        pairs_per_turn: Turn-level pairs drawn per turn, top half vs bottom half
            (paper: 4).

    """

    dpo_beta: float = 0.1
    nll_coef: float = 0.01
    critic_learning_rate: float = 2e-7
    critic_epochs: int = 4
    critic_beta: float = 0.1
    critic_batch_size: int = 1
    critic_uses_reference: bool = True
    critic_head: str = "log_ratio"
    length_normalize: bool = True
    critic_score: str = "sum"
    hint_template: str = REFERENCE_HINT
    critic_model: str | None = None
    pair_success_only: bool = True
    min_reward_gap: float = 0.0
    held_out_fraction: float = 0.1
    candidate_fraction: float = 0.1
    num_candidates: int = 16
    candidate_temperature: float = 1.0
    candidate_max_new_tokens: int | None = None
    pairs_per_turn: int = 4

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_positive("dpo_beta", "critic_learning_rate", "critic_epochs", "critic_beta")
        self._check_positive("critic_batch_size", "pairs_per_turn")
        self._check_non_negative("nll_coef", "min_reward_gap", "candidate_temperature")
        self._check_fraction("candidate_fraction")
        self._check_choice("critic_head", ("log_ratio", "value"))
        self._check_choice("critic_score", ("sum", "last_turn"))
        if not 0.0 <= self.held_out_fraction < 1.0:
            raise ValueError(f"held_out_fraction must be in [0, 1), got {self.held_out_fraction}")
        if self.num_candidates < 2:
            raise ValueError(
                f"num_candidates must be at least 2 (pairs need two), got {self.num_candidates}"
            )


class SweetRL(Algorithm):
    """SWEET-RL: an asymmetric critic from trajectory pairs, then DPO on its turn-level pairs.

    Example:
        >>> algo = SweetRL(agent, SweetRLConfig(output_dir="runs/sweet"))
        >>> metrics = algo.fit(buffer)   # critic/heldout_pair_accuracy, train/loss, ...
        >>> agents.evaluate(algo.policy, "ColBench-Backend-v0", num_tasks=100)

    Attributes:
        critic: The trained critic (a causal LM, or a :class:`ValueHeadModel` for the
            value-head ablation); ``None`` before :meth:`fit_critic`.

    """

    name = "sweet-rl"
    config_class = SweetRLConfig
    config: SweetRLConfig

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.critic: Any = None
        self._critic_reference: Any = None

    # -- the whole algorithm -------------------------------------------------------------

    def _fit(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        pairs = self.trajectory_pairs(buffer)
        if not pairs:
            raise ValueError(
                f"no trajectory pairs in {len(buffer)} trajectories: each task needs a better "
                f"and a strictly worse episode"
                + (
                    " and at least one success (pair_success_only=True)"
                    if self.config.pair_success_only
                    else ""
                )
                + "; collect several samples per task (agents.collect(..., samples_per_task=3))"
            )
        train, held_out = split_pairs(
            pairs, held_out_fraction=self.config.held_out_fraction, seed=self.config.seed
        )
        metrics = {
            "critic/num_pairs": float(len(train)),
            "critic/num_heldout_pairs": float(len(held_out)),
        }
        metrics.update(self.fit_critic(train))
        if self.trainer.stopped:
            return metrics
        metrics["critic/train_pair_accuracy"] = self.critic_accuracy(train)
        if held_out:
            metrics["critic/heldout_pair_accuracy"] = self.critic_accuracy(held_out)
        self.log_metrics({k: v for k, v in metrics.items() if "accuracy" in k})
        pairs_for_policy = self.candidate_pairs(buffer)
        metrics["train/num_pairs"] = float(len(pairs_for_policy))
        if not pairs_for_policy:
            raise ValueError(
                "the critic produced no turn-level pairs (every turn's candidates tied); "
                "raise num_candidates or candidate_temperature"
            )
        metrics.update(self.fit_policy(pairs_for_policy))
        return metrics

    # -- step 1: trajectory pairs ------------------------------------------------------------

    def trajectory_pairs(
        self, buffer: TrajectoryBuffer | Sequence[Trajectory]
    ) -> list[TrajectoryPair]:
        """Pair each task's best trajectory with every strictly worse one (step 1)."""
        return trajectory_pairs(
            buffer,
            success_only=self.config.pair_success_only,
            min_reward_gap=self.config.min_reward_gap,
        )

    # -- step 2: the critic ---------------------------------------------------------------

    def _ensure_critic(self) -> None:
        """Build the critic (and its frozen start, for the log-ratio) the first time."""
        if self.critic is not None:
            return
        if self.config.critic_model is None:
            lm = clone_model(self.policy.model)
            reference = self.policy.model  # same start; frozen until the policy stage
        else:
            from transformers import AutoModelForCausalLM

            lm = AutoModelForCausalLM.from_pretrained(self.config.critic_model)
            reference = clone_model(lm)
            lm.to(self.policy.model.device)
            reference.to(self.policy.model.device)
        self.critic = ValueHeadModel(lm, 1) if self.config.critic_head == "value" else lm
        self._critic_reference = reference

    def _hint(self) -> str | None:
        return self.config.hint_template if self.config.critic_uses_reference else None

    def _trajectory_inputs(self, trajectory: Trajectory) -> dict[str, list[Any]]:
        where = f"trajectory of task {trajectory.task_id!r}"
        return {
            "prompts": [
                critic_prompt(self.policy, turn, trajectory.reference, self._hint(), where=where)
                for turn in trajectory.turns
            ],
            "actions": [turn.action for turn in trajectory.turns],
        }

    def _reference_values(self, prompts: Sequence[str], actions: Sequence[str]) -> list[float]:
        """Per-turn log-probs under the critic's frozen start (mean or sum, per the config)."""
        if self.config.critic_head == "value":
            return [0.0] * len(prompts)
        with torch.no_grad():
            logps = turn_logprobs(
                self._critic_reference,
                self.encode(prompts, actions),
                micro_batch_size=self.config.batch_size,
            )
        values = logps.mean if self.config.length_normalize else logps.sum
        return values.tolist()

    def _turn_values(
        self, model: Any, prompts: Sequence[str], actions: Sequence[str], reference: Sequence[float]
    ) -> torch.Tensor:
        """Per-turn critic scores: the turn advantage (log-ratio) or the value head's output."""
        encoded = self.encode(prompts, actions)
        device = next(model.parameters()).device
        if self.config.critic_head == "value":
            encoded = encoded.to(device)
            return model(encoded.input_ids, encoded.attention_mask)[:, 0]
        logps = turn_logprobs(model, encoded)
        values = logps.mean if self.config.length_normalize else logps.sum
        return turn_advantage(
            values, torch.tensor(reference, device=device), beta=self.config.critic_beta
        )

    def _pair_items(self, pairs: Sequence[TrajectoryPair], name: str) -> list[dict[str, Any]]:
        """Critic inputs and frozen reference values of each pair's two trajectories (cached)."""

        def compute() -> list[dict[str, Any]]:
            items = []
            for pair in pairs:
                item = {}
                for side, trajectory in (("chosen", pair.chosen), ("rejected", pair.rejected)):
                    inputs = self._trajectory_inputs(trajectory)
                    inputs["reference"] = self._reference_values(
                        inputs["prompts"], inputs["actions"]
                    )
                    item[side] = inputs
                items.append(item)
            return items

        return self.trainer.cached(name, compute)

    def _pair_scores(
        self, model: Any, batch: Sequence[dict[str, Any]]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Trajectory scores of each pair's chosen and rejected side (gradients flow)."""
        prompts, actions, reference, index = [], [], [], []
        for position, item in enumerate(batch):
            for offset, side in enumerate(("chosen", "rejected")):
                inputs = item[side]
                prompts += inputs["prompts"]
                actions += inputs["actions"]
                reference += inputs["reference"]
                index += [2 * position + offset] * len(inputs["prompts"])
        values = self._turn_values(model, prompts, actions, reference)
        index_tensor = torch.tensor(index, device=values.device)
        aggregate = (
            last_turn_scores if self.config.critic_score == "last_turn" else trajectory_scores
        )
        scores = aggregate(values, index_tensor, 2 * len(batch))
        return scores[0::2], scores[1::2]

    def _critic_loss(
        self, model: Any, batch: list[dict[str, Any]]
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
        if not pairs:
            raise ValueError("fit_critic needs at least one trajectory pair")
        with self._session(_pairs_fingerprint(pairs)):
            self._ensure_critic()
            items = self._pair_items(pairs, "critic_pairs")
            critic = self.critic
            stage = Stage(
                name="critic",
                namespace="critic",
                model=critic,
                items=items,
                loss=self._critic_loss,
                learning_rate=self.config.critic_learning_rate,
                num_epochs=self.config.critic_epochs,
                batch_size=self.config.critic_batch_size,
                save=_save_critic,
                load=lambda directory: _load_critic(critic, directory),
            )
            return self._run_stage(stage)

    def critic_accuracy(self, pairs: Sequence[TrajectoryPair]) -> float:
        """Fraction of pairs whose chosen trajectory the critic scores higher (ties: half).

        Raises:
            RuntimeError: If the critic has not been trained or loaded.

        """
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        if not pairs:
            raise ValueError("critic_accuracy needs at least one pair")
        with torch.no_grad():
            items = [
                {
                    side: {
                        **inputs,
                        "reference": self._reference_values(inputs["prompts"], inputs["actions"]),
                    }
                    for side, inputs in (
                        ("chosen", self._trajectory_inputs(pair.chosen)),
                        ("rejected", self._trajectory_inputs(pair.rejected)),
                    )
                }
                for pair in pairs
            ]
            chosen, rejected = self._pair_scores(self.critic, items)
        return float(((chosen > rejected).float() + 0.5 * (chosen == rejected).float()).mean())

    def score_actions(
        self, messages: Sequence[dict[str, str]], reference: dict[str, Any], actions: Sequence[str]
    ) -> list[float]:
        """Score candidate actions for one turn with the critic (higher: more promising).

        For the log-ratio critic the score is the turn advantage ``critic_beta x
        (critic - frozen start)`` of each action, mean (or summed) token log-probs.

        Args:
            messages: The turn's context (the chat before the action).
            reference: The trajectory's training-time information.
            actions: Candidate actions.

        Raises:
            RuntimeError: If the critic has not been trained or loaded.

        """
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        turn = Turn(messages=[dict(m) for m in messages], action="")
        prompt = critic_prompt(self.policy, turn, reference, self._hint())
        prompts = [prompt] * len(actions)
        with torch.no_grad():
            reference_values = self._reference_values(prompts, actions)
            scores = []
            size = self.config.batch_size
            for start in range(0, len(actions), size):
                part = slice(start, start + size)
                scores += self._turn_values(
                    self.critic, prompts[part], actions[part], reference_values[part]
                ).tolist()
        return scores

    # -- steps 3 and 4: turn-level pairs ------------------------------------------------------

    def candidate_pairs(self, buffer: TrajectoryBuffer | Sequence[Trajectory]) -> list[TurnPair]:
        """Sample candidates for a share of turns, rank them with the critic, pair them (steps 3-4).

        Returns:
            Turn-level pairs (cached in the run directory, so a resumed run does not
            sample again).

        """
        turns = [(t, turn) for t in buffer for turn in t.turns]
        with self._session([t.to_dict() for t in buffer]):
            data = self.trainer.cached("candidate_pairs", lambda: self._candidate_pairs(turns))
        return [
            TurnPair(
                messages=tuple(p["messages"]), **{k: v for k, v in p.items() if k != "messages"}
            )
            for p in data
        ]

    def _candidate_pairs(self, turns: list[tuple[Trajectory, Any]]) -> list[dict[str, Any]]:
        if self.critic is None:
            raise RuntimeError("no critic yet: call fit_critic (or fit) first")
        rng = np.random.default_rng([self.config.seed, 3])
        count = min(len(turns), max(1, round(self.config.candidate_fraction * len(turns))))
        chosen = sorted(rng.choice(len(turns), size=count, replace=False).tolist())
        selected = [turns[i] for i in chosen]
        prompts = self.policy_prompts([turn for _, turn in selected])
        candidates = self.policy.generate(
            prompts,
            n=self.config.num_candidates,
            temperature=self.config.candidate_temperature,
            max_new_tokens=self.config.candidate_max_new_tokens,
        )
        pairs = []
        for (trajectory, turn), actions in tqdm(
            list(zip(selected, candidates)),
            desc="score candidates",
            disable=not self.config.progress,
        ):
            scores = self.score_actions(turn.messages, trajectory.reference, actions)
            pairs += turn_pairs(
                turn.messages, actions, scores, num_pairs=self.config.pairs_per_turn, rng=rng
            )
        return [dataclasses.asdict(pair) for pair in pairs]

    # -- step 5: the policy ----------------------------------------------------------------------

    def _policy_items(self, pairs: Sequence[TurnPair]) -> list[dict[str, Any]]:
        """Each pair with its prompt and the frozen policy's summed log-probs (cached)."""

        def compute() -> list[dict[str, Any]]:
            prompts = self.policy.format_prompts([list(p.messages) for p in pairs])
            chosen = [p.chosen for p in pairs]
            rejected = [p.rejected for p in pairs]
            with torch.no_grad():
                size = self.config.batch_size
                ref_c = turn_logprobs(
                    self.policy.model, self.encode(prompts, chosen), micro_batch_size=size
                ).sum
                ref_r = turn_logprobs(
                    self.policy.model, self.encode(prompts, rejected), micro_batch_size=size
                ).sum
            return [
                {"prompt": p, "chosen": c, "rejected": r, "ref_chosen": rc, "ref_rejected": rr}
                for p, c, r, rc, rr in zip(
                    prompts, chosen, rejected, ref_c.tolist(), ref_r.tolist()
                )
            ]

        return self.trainer.cached("policy_pairs", compute)

    def _policy_loss(
        self, model: Any, batch: list[dict[str, Any]]
    ) -> tuple[torch.Tensor, dict[str, float]]:
        prompts = [item["prompt"] for item in batch]
        encoded = self.encode(
            prompts * 2, [i["chosen"] for i in batch] + [i["rejected"] for i in batch]
        )
        logps = turn_logprobs(model, encoded)
        size = len(batch)
        device = logps.sum.device
        out = dpo_loss(
            logps.sum[:size],
            logps.sum[size:],
            torch.tensor([i["ref_chosen"] for i in batch], device=device),
            torch.tensor([i["ref_rejected"] for i in batch], device=device),
            beta=self.config.dpo_beta,
            chosen_nll=-logps.mean[:size],
            nll_coef=self.config.nll_coef,
        )
        return out.loss, {
            "reward_accuracy": float(out.reward_accuracy),
            "reward_margin": float(out.reward_margin),
            "chosen_nll": float(-logps.mean[:size].detach().mean()),
        }

    def fit_policy(self, pairs: Sequence[TurnPair]) -> dict[str, float]:
        """DPO on turn-level pairs with an NLL term on the chosen action (step 5).

        The frozen reference is the policy as it is when this is called: its log-probs
        are computed once, first, so no second copy of the model is kept.

        Args:
            pairs: From :meth:`candidate_pairs`, or your own :class:`TurnPair` list.

        Returns:
            ``train/`` metrics averaged over the last epoch.

        """
        if not pairs:
            raise ValueError("fit_policy needs at least one turn pair")
        with self._session([dataclasses.asdict(p) for p in pairs]):
            items = self._policy_items(pairs)
            return self._run_stage(self._policy_stage("policy", items, self._policy_loss))

    # -- persistence ----------------------------------------------------------------------------

    def _save_components(self, directory: Path) -> None:
        if self.critic is None:
            return
        _save_critic(self.critic, self.critic.state_dict(), directory / "critic")

    def _load_components(self, directory: Path) -> None:
        if not (directory / "critic").exists():
            return
        self._ensure_critic()
        _load_critic(self.critic, directory / "critic")


def _save_critic(model: Any, state_dict: dict[str, Any], directory: Path) -> None:
    if isinstance(model, ValueHeadModel):
        model.save(state_dict, directory)
    else:
        save_causal_lm(model, state_dict, directory)


def _load_critic(model: Any, directory: Path) -> None:
    if isinstance(model, ValueHeadModel):
        model.load(directory)
    else:
        load_weights(model, directory)


def _pairs_fingerprint(pairs: Sequence[TrajectoryPair]) -> list[Any]:
    return [[p.task_id, p.chosen.to_dict(), p.rejected.to_dict()] for p in pairs]
