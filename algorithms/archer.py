"""ArCHer: a hierarchical actor-critic with an utterance-level Q/V critic, trained off-policy.

ArCHer (Zhou et al. 2024, arXiv 2402.19446) learns a critic over whole utterances by
temporal-difference learning and updates the token-level policy with the critic's
advantage. Here both run off-policy on a fixed buffer of trajectories:

1. **Critic** — one :class:`~algorithms.models.ValueHeadModel` with three heads, ``Q1``
   and ``Q2`` read on the state followed by the action and ``V`` read on the state alone
   (the state is the turn's chat, formatted with the policy's chat template)::

       Q_i(s, a) <- r + gamma * (1 - done) * V_target(s')
       V(s)      <- min(Q1_target, Q2_target)(s, a)          (a: the buffer's action)

   ``*_target`` is a copy of the critic, Polyak-averaged with ``tau`` after every
   optimizer step.
2. **Actor** — ``A(s, a) = min(Q1, Q2)(s, a) - V(s)`` for every turn, computed once with
   the trained critic, weights the summed log-prob of the action:
   ``loss = -mean(A * log pi(a | s))``.

With ``critic_uses_reference=True`` the critic's system prompt also states the task's
ground truth (the hint SWEET-RL gives its critic), so the critic sees training-time
information while the policy never does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import torch

from agents.transformers_agent import TransformersAgent
from algorithms.base import Algorithm
from algorithms.config import TrainingConfig
from algorithms.critic_inputs import REFERENCE_HINT, critic_prompt
from algorithms.logprobs import turn_logprobs
from algorithms.losses import (
    advantage_weighted_policy_loss,
    double_q_min,
    soft_update,
    td_targets,
    value_regression_loss,
)
from algorithms.models import ValueHeadModel, clone_model, encode_texts
from algorithms.trainer import Stage
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__all__ = [
    "ArCHer",
    "ArCHerConfig",
    "Transition",
    "build_transitions",
]

_Q1, _Q2, _V = 0, 1, 2  # the critic's heads


@dataclass(frozen=True)
class ArCHerConfig(TrainingConfig):
    """Settings of :class:`ArCHer` (and every :class:`TrainingConfig` setting).

    ``learning_rate``, ``num_epochs`` and ``batch_size`` are the actor's. ArCHer's
    published values (gamma, tau) come from its own online setting with its own models;
    the rest are our choices for off-policy training on a ColBench buffer.

    Attributes:
        learning_rate: AdamW step size of the actor (our choice: 1e-6; the advantage
            weights are standardised, so the update is larger than a DPO step at 2e-7).
        gamma: Discount of the critic's TD targets (ArCHer paper: 0.95).
        tau: Polyak step of the target critic after every critic optimizer step
            (ArCHer paper: 0.1).
        critic_learning_rate: AdamW step size of the critic (our choice: 1e-5).
        critic_epochs: Passes of the critic over the buffer's transitions (our choice: 3).
        critic_batch_size: Transitions per critic forward pass on each process (our
            choice: 8).
        critic_uses_reference: Append :data:`REFERENCE_HINT` (the ground truth) to the
            critic's system prompt (our choice: off, ArCHer's critic sees what the
            policy sees).
        critic_model: Local path of a causal LM to initialise the critic from (loaded
            with ``AutoModelForCausalLM.from_pretrained``, with its own tokenizer);
            ``None``: a copy of the policy's model (our choice).
        normalise_advantages: Standardise the advantages over all of the buffer's turns
            before the actor update (our choice: on). Done once over the whole buffer,
            not per batch: a batch of one turn would always get advantage 0.

    """

    learning_rate: float = 1e-6
    gamma: float = 0.95
    tau: float = 0.1
    critic_learning_rate: float = 1e-5
    critic_epochs: int = 3
    critic_batch_size: int = 8
    critic_uses_reference: bool = False
    critic_model: str | None = None
    normalise_advantages: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_fraction("gamma", "tau")
        self._check_positive("critic_learning_rate", "critic_epochs", "critic_batch_size")
        if self.critic_model is not None:
            object.__setattr__(self, "critic_model", str(self.critic_model))


@dataclass(frozen=True)
class Transition:
    """One step ``(s_t, a_t, r_t, s_{t+1}, done)`` of a trajectory.

    Attributes:
        turn: The turn (its messages are ``s_t``, its action ``a_t``).
        next_turn: The trajectory's next turn (its messages are ``s_{t+1}``); ``None``
            when ``done``.
        reward: ``r_t``, the turn's reward.
        done: Whether ``s_{t+1}`` is terminal: the turn ended the episode or is the
            trajectory's last.
        reference: The trajectory's training-time information.
        trajectory_index: Position of the trajectory in the buffer.
        task_id: The trajectory's task.

    """

    turn: Turn
    next_turn: Turn | None
    reward: float
    done: bool
    reference: Mapping[str, Any]
    trajectory_index: int
    task_id: str


def build_transitions(buffer: Sequence[Trajectory]) -> list[Transition]:
    """Split trajectories into transitions, in the order of ``buffer.turns()``.

    A trajectory cut off without a ``done`` turn still ends with a terminal transition:
    there is no next state to bootstrap from.

    Args:
        buffer: Trajectories.

    Returns:
        One transition per turn.

    """
    transitions = []
    for index, trajectory in enumerate(buffer):
        turns = trajectory.turns
        for position, turn in enumerate(turns):
            done = turn.done or position == len(turns) - 1
            transitions.append(
                Transition(
                    turn=turn,
                    next_turn=None if done else turns[position + 1],
                    reward=float(turn.reward),
                    done=done,
                    reference=trajectory.reference,
                    trajectory_index=index,
                    task_id=trajectory.task_id,
                )
            )
    return transitions


class _CriticExample(NamedTuple):
    """A transition as the critic's texts (plain data: stage items hold no tensors)."""

    state_action: str
    state: str
    next_state: str | None
    reward: float
    done: bool


class _ActorExample(NamedTuple):
    turn: Turn
    advantage: float  # the critic's, as computed
    weight: float  # what multiplies the log-prob (standardised when configured)


class ArCHer(Algorithm):
    """Off-policy ArCHer: an utterance-level Q/V critic by TD learning, then an actor update.

    Stages: ``"critic"`` (metrics ``critic/...``), then ``"policy"`` (``train/...``).
    The critic starts as a copy of the policy's model (or ``config.critic_model``) with
    three scalar heads; see the module docstring for the objectives.

    Example:
        >>> archer = ArCHer(agent, ArCHerConfig(critic_epochs=2))
        >>> metrics = archer.fit(buffer)   # {"critic/q_loss": ..., "train/loss": ...}
        >>> archer.advantages(buffer)      # one advantage per turn

    Attributes:
        critic: The Q1/Q2/V :class:`~algorithms.models.ValueHeadModel` (built on first
            use).

    """

    name = "archer"
    config_class = ArCHerConfig
    config: ArCHerConfig

    def __init__(
        self, policy: TransformersAgent, config: ArCHerConfig | None = None, **kwargs: Any
    ):
        super().__init__(policy, config, **kwargs)
        self._critic: ValueHeadModel | None = None
        self._critic_tokenizer: Any = None
        self._target: ValueHeadModel | None = None
        self._critic_calls = 0

    # -- the critic --------------------------------------------------------------------

    @property
    def critic(self) -> ValueHeadModel:
        """The critic (Q1, Q2 and V heads), built from the policy or ``critic_model``."""
        if self._critic is None:
            if self.config.critic_model is None:
                lm = clone_model(self.policy.model)
            else:
                from transformers import AutoModelForCausalLM

                lm = AutoModelForCausalLM.from_pretrained(self.config.critic_model)
                lm.to(next(self.policy.model.parameters()).device)
            self._critic = ValueHeadModel(lm, num_heads=3)
        return self._critic

    @property
    def critic_tokenizer(self) -> Any:
        """The critic's tokenizer: the policy's, or ``critic_model``'s own."""
        if self._critic_tokenizer is None:
            if self.config.critic_model is None:
                self._critic_tokenizer = self.policy.tokenizer
            else:
                from transformers import AutoTokenizer

                self._critic_tokenizer = AutoTokenizer.from_pretrained(self.config.critic_model)
        return self._critic_tokenizer

    def critic_inputs(self, buffer: Sequence[Trajectory]) -> list[str]:
        """Return each turn's state as the critic reads it (``V``'s input), in turn order.

        Raises:
            ValueError: With ``critic_uses_reference``, if a trajectory's reference has
                no ``ground_truth`` (the message names the trajectory).

        """
        return [example.state for example in self._critic_examples(build_transitions(buffer))]

    def fit_critic(self, buffer: TrajectoryBuffer | Sequence[Trajectory]) -> dict[str, float]:
        """Train the critic by TD learning on the buffer's transitions (the ``"critic"`` stage).

        Returns:
            The stage's metrics: ``critic/loss``, ``critic/q_loss``, ``critic/v_loss``,
            ``critic/q_mean``, ``critic/v_mean``, ...

        """
        examples = self._critic_examples(build_transitions(buffer))
        data = [] if self._trainer is not None else [t.to_dict() for t in buffer]
        with self._session(data):
            try:
                return self._run_stage(self._critic_stage(examples))
            finally:
                self._target = None  # a whole model copy: free it once the stage is over

    @torch.no_grad()
    def critic_values(self, buffer: Sequence[Trajectory]) -> torch.Tensor:
        """Return the critic's values of every turn, in ``buffer.turns()`` order.

        Returns:
            ``(num_turns, 3)`` float32 on the CPU: columns Q1, Q2 (read on state + action)
            and V (read on the state).

        """
        examples = self._critic_examples(build_transitions(buffer))
        critic = self.critic
        was_training = critic.training
        critic.eval()
        rows = []
        try:
            for start in range(0, len(examples), self.config.critic_batch_size):
                chunk = examples[start : start + self.config.critic_batch_size]
                values = self._values(
                    critic, [e.state_action for e in chunk] + [e.state for e in chunk]
                )
                n = len(chunk)
                rows.append(torch.stack([values[:n, _Q1], values[:n, _Q2], values[n:, _V]], dim=1))
        finally:
            critic.train(was_training)
        return torch.cat(rows).cpu() if rows else torch.zeros((0, 3))

    def advantages(self, buffer: Sequence[Trajectory]) -> list[float]:
        """Return ``min(Q1, Q2)(s, a) - V(s)`` for every turn, in ``buffer.turns()`` order."""
        values = self.critic_values(buffer)
        return (double_q_min(values[:, _Q1], values[:, _Q2]) - values[:, _V]).tolist()

    def _critic_examples(self, transitions: Sequence[Transition]) -> list[_CriticExample]:
        hint = REFERENCE_HINT if self.config.critic_uses_reference else None

        def state(turn: Turn, transition: Transition) -> str:
            where = f"trajectory {transition.trajectory_index} (task {transition.task_id!r})"
            return critic_prompt(self.policy, turn, transition.reference, hint, where=where)

        examples = []
        for t in transitions:
            current = state(t.turn, t)
            following = None if t.next_turn is None else state(t.next_turn, t)
            examples.append(
                _CriticExample(current + t.turn.action, current, following, t.reward, t.done)
            )
        return examples

    def _values(self, model: torch.nn.Module, texts: Sequence[str]) -> torch.Tensor:
        ids, mask = encode_texts(self.critic_tokenizer, texts, max_length=self.config.max_length)
        device = next(model.parameters()).device
        return model(ids.to(device), mask.to(device))

    def _critic_stage(self, examples: list[_CriticExample]) -> Stage:
        critic = self.critic
        self._target, self._critic_calls = None, 0
        return Stage(
            name="critic",
            namespace="critic",
            model=critic,
            items=examples,
            loss=self._critic_loss,
            learning_rate=self.config.critic_learning_rate,
            num_epochs=self.config.critic_epochs,
            save=lambda trained, state, directory: trained.save(state, directory),
            load=lambda directory: critic.load(directory),
            batch_size=self.config.critic_batch_size,
        )

    def _sync_target(self) -> None:
        """Create or Polyak-update the target critic; called at the start of each critic loss.

        The trainer steps the optimizer after the loss call, so the update for step k
        happens at the start of the first loss call after it (counting calls across
        gradient accumulation). The target is cloned at the first call, after a resumed
        stage has restored its checkpoint, so it starts from the restored critic.
        """
        if self._target is None:
            self._target = clone_model(self.critic)
            self._target.requires_grad_(False)
        elif self._critic_calls % self.config.gradient_accumulation_steps == 0:
            soft_update(self._target, self.critic, tau=self.config.tau)
        self._critic_calls += 1

    def _critic_loss(
        self, model: torch.nn.Module, batch: list[_CriticExample]
    ) -> tuple[torch.Tensor, dict[str, float]]:
        self._sync_target()
        n = len(batch)
        values = self._values(model, [e.state_action for e in batch] + [e.state for e in batch])
        q1, q2, v = values[:n, _Q1], values[:n, _Q2], values[n:, _V]
        with torch.no_grad():
            ongoing = [i for i, e in enumerate(batch) if not e.done]
            target = self._values(
                self._target,
                [e.state_action for e in batch] + [batch[i].next_state for i in ongoing],
            )
            next_v = torch.zeros(n, device=target.device)
            next_v[ongoing] = target[n:, _V]
            rewards = torch.tensor([e.reward for e in batch], device=target.device)
            dones = torch.tensor([e.done for e in batch], device=target.device)
            q_target = td_targets(rewards, next_v, dones, gamma=self.config.gamma)
            v_target = double_q_min(target[:n, _Q1], target[:n, _Q2])
        q_loss = value_regression_loss(q1, q_target) + value_regression_loss(q2, q_target)
        v_loss = value_regression_loss(v, v_target)
        diagnostics = {
            "q_loss": float(q_loss.detach()),
            "v_loss": float(v_loss.detach()),
            "q_mean": float(double_q_min(q1, q2).detach().mean()),
            "v_mean": float(v.detach().mean()),
        }
        return q_loss + v_loss, diagnostics

    # -- the actor ---------------------------------------------------------------------

    def _fit(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        critic_metrics = self.fit_critic(buffer)
        if self.trainer.stopped:
            return critic_metrics
        advantages = self.trainer.cached("archer_advantages", lambda: self.advantages(buffer))
        weights = torch.tensor(advantages, dtype=torch.float64)
        if self.config.normalise_advantages:
            weights = (weights - weights.mean()) / (weights.std(unbiased=False) + 1e-8)
        turns = [turn for _, turn in buffer.turns()]
        items = [_ActorExample(*row) for row in zip(turns, advantages, weights.tolist())]
        policy_metrics = self._run_stage(self._policy_stage("policy", items, self._policy_loss))
        return {**critic_metrics, **policy_metrics, "critic/num_transitions": float(len(items))}

    def _policy_loss(
        self, model: Any, batch: list[_ActorExample]
    ) -> tuple[torch.Tensor, dict[str, float]]:
        turns = [example.turn for example in batch]
        encoded = self.encode(self.policy_prompts(turns), [turn.action for turn in turns])
        logps = turn_logprobs(model, encoded).sum
        weights = torch.tensor([e.weight for e in batch], device=logps.device, dtype=logps.dtype)
        loss = advantage_weighted_policy_loss(logps, weights)
        return loss, {"advantage_mean": sum(e.advantage for e in batch) / len(batch)}

    # -- persistence -------------------------------------------------------------------

    def _save_components(self, directory: Path) -> None:
        if self._critic is None:
            return
        self._critic.save(self._critic.state_dict(), directory / "critic")
        if self.config.critic_model is not None:
            self.critic_tokenizer.save_pretrained(str(directory / "critic" / "lm"))

    def _load_components(self, directory: Path) -> None:
        saved = directory / "critic"
        if not saved.exists():
            return
        if self.config.critic_model is None:
            lm = clone_model(self.policy.model)
        else:  # the saved copy: the original path may not exist where this is loaded
            from transformers import AutoModelForCausalLM, AutoTokenizer

            lm = AutoModelForCausalLM.from_pretrained(str(saved / "lm"))
            lm.to(next(self.policy.model.parameters()).device)
            self._critic_tokenizer = AutoTokenizer.from_pretrained(str(saved / "lm"))
        critic = ValueHeadModel(lm, num_heads=3)
        critic.load(saved)
        self._critic = critic
