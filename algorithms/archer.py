"""ArCHer: a hierarchical actor-critic with an utterance-level Q/V critic, trained off-policy.

ArCHer (Zhou et al. 2024, arXiv 2402.19446) learns a critic over whole utterances by
temporal-difference learning and updates the token-level policy with the critic's
advantage. Here both run off-policy on a fixed buffer of trajectories:

1. **Critic** — one :class:`~algorithms.models.ValueHeadModel` with three heads, ``Q1``
   and ``Q2`` read on the state followed by the action and ``V`` read on the state alone
   (the state is the turn's chat, formatted with the policy's chat template)::

       Q_i(s, a) <- r + gamma * (1 - done) * V_target(s')
       V(s)      <- mean_k min(Q1_target, Q2_target)(s, a_k),   a_k ~ pi(. | s)

   ``V`` learns the value of the *current policy*, ``E_{a ~ pi} min Q(s, a)``, as in the
   paper: ``value_samples`` actions per state are sampled from the policy once per fit
   (before the critic trains; the policy does not change until the actor stage) and
   scored by the moving target at every critic step. ``value_samples=0`` regresses ``V``
   on ``min Q_target(s, a)`` at the buffer's own action instead; most states appear
   with one action, so the advantage ``min Q - V`` then shrinks towards 0 and
   standardising it mostly amplifies noise.

   ``*_target`` is a copy of the critic, Polyak-averaged with ``tau`` after every
   optimizer step (an ``on_step`` hook, so the loss has no side effects). Under FSDP2
   the copy is sharded like the critic (one shard per process, no full copy).
2. **Actor** — ``A(s, a) = min(Q1, Q2)(s, a) - V(s)`` for every turn, computed once with
   the trained critic, weights the summed log-prob of the action; the loss is a mean over
   the action tokens of ``batch_size`` trajectories,
   ``loss = -sum(A * log pi(a | s)) / (number of action tokens)``, so its value reads as
   an advantage-weighted per-token log-prob (the gradient's direction is that of the
   turn mean).

The critic reads a whole trajectory as one sequence: ``V(s_t)`` at the last token of
turn t's state and ``Q(s_t, a_t)`` at the end-of-turn token after its action (causal
attention makes each the value of that prefix alone), so a T-turn dialogue costs O(T)
tokens, not the O(T^2) of one prefix per turn. A sampled action is not part of the
dialogue: it goes into the dialogue's row as a branch right after its state, attending
to the state's tokens and its own but seen by no later token
(:class:`~algorithms.batches.BranchedValueActions`), so the target's one no-gradient
pass per critic batch reads ``Q_target`` and ``V_target`` on the dialogue and
``Q_target(s_t, a_k)`` on every sample, without reading each state again per sample.
A critic whose attention takes no such mask (flash attention, sliding windows) reads
each ``(s_t, a_k)`` as a row of its own instead: ``K`` extra target passes per batch,
each with one row per turn.

Cost of ``value_samples = K``: ``K`` generations per buffer turn, once per fit (sharded
across processes and cached in the run directory, so a resumed run does not sample
again), and ``K`` sampled actions' tokens per turn in the target's pass.

With ``critic_uses_reference=True`` the critic's system prompt also states the task's
ground truth (the hint SWEET-RL gives its critic), so the critic sees training-time
information while the policy never does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from agents.loading import load_causal_lm
from agents.transformers_agent import TransformersAgent
from algorithms.base import Algorithm
from algorithms.batches import (
    ActorBatch,
    ActorExample,
    CriticBatch,
    CriticTrajectory,
    collate_actor_examples,
    collate_critic_trajectories,
    split_by_lengths,
)
from algorithms.config import TrainingConfig
from algorithms.critic_inputs import REFERENCE_HINT, critic_prompt
from algorithms.distributed import full_state_dict, map_sharded, reshard
from algorithms.logprobs import branch_rows_supported, turn_logprobs
from algorithms.losses import (
    advantage_weighted_policy_loss,
    double_q_min,
    sampled_value_targets,
    soft_update,
    td_targets,
    value_regression_loss,
)
from algorithms.models import ValueHeadModel, clone_model, frozen_copy
from algorithms.trainer import Stage, upcast_trainable
from sweetrl_gym.lm import CausalLM, Tokenizer
from sweetrl_gym.processes import process_state
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__all__ = [
    "ActorBatch",
    "ActorExample",
    "ArCHer",
    "ArCHerConfig",
    "CriticBatch",
    "CriticTrajectory",
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
        critic_batch_size: Trajectories per critic forward pass on each process (each is
            one sequence; our choice: 8).
        critic_uses_reference: Append :data:`REFERENCE_HINT` (the ground truth) to the
            critic's system prompt (our choice: off, ArCHer's critic sees what the
            policy sees).
        critic_model: A hub id, local folder or ``"default"`` of a causal LM to initialise
            the critic from (:func:`agents.loading.load_causal_lm`, with its own
            tokenizer); ``None``: a copy of the policy's model (our choice).
        normalise_advantages: Standardise the advantages over all of the buffer's turns
            before the actor update (our choice: on). Done once over the whole buffer,
            not per batch: a batch of one turn would always get advantage 0.
        value_samples: Actions sampled from the policy per state for ``V``'s target,
            the mean of ``min(Q1, Q2)_target`` over them (ArCHer's ``E_{a ~ pi}``; our
            choice: 2, cheap enough for the CPU configs: 2 generations per buffer turn,
            once per fit). ``0``: the old behaviour, ``V``'s target is ``min(Q1,
            Q2)_target`` at the buffer's own action (no sampling).
        value_temperature: Sampling temperature of those actions; ``None``: the policy's
            own (they should come from the policy as it acts).
        value_max_new_tokens: Longest sampled action; ``None``: the policy's
            ``max_new_tokens``.

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
    value_samples: int = 2
    value_temperature: float | None = None
    value_max_new_tokens: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_fraction("gamma", "tau")
        self._check_positive("critic_learning_rate", "critic_epochs", "critic_batch_size")
        self._check_non_negative("value_samples")
        if self.value_temperature is not None:
            self._check_non_negative("value_temperature")
        if self.value_max_new_tokens is not None:
            self._check_positive("value_max_new_tokens")
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
        critic: The Q1/Q2/V :class:`~algorithms.models.ValueHeadModel`; ``None`` until
            :meth:`fit_critic`, :meth:`critic_values` or :meth:`Algorithm.load` builds it.

    """

    name = "archer"
    label = "ArCHer"
    config_class = ArCHerConfig
    config: ArCHerConfig

    def __init__(
        self, policy: TransformersAgent, config: ArCHerConfig | None = None, **kwargs: Any
    ):
        super().__init__(policy, config, **kwargs)
        self.critic: ValueHeadModel | None = None
        self._critic_tokenizer: Tokenizer | None = None
        self._target: Any = None

    # -- the critic --------------------------------------------------------------------

    def _ensure_critic(self) -> ValueHeadModel:
        """Build the critic (Q1, Q2 and V heads) the first time; return it."""
        if self.critic is None:
            if self.config.lora_rank:
                raise ValueError(
                    "ArCHer trains full critics: set lora_rank=0 for it (SWEET-RL, MT-DPO and "
                    "RFT take LoRA)"
                )
            self.critic = self._new_critic(self.config.critic_model)
        return self.critic

    def _new_critic(self, source: str | Path | None) -> ValueHeadModel:
        """Return a critic on a copy of the policy's model (``None``) or on the LM at ``source``."""
        if source is None:
            lm = clone_model(self.policy.model)
        else:
            lm, self._critic_tokenizer = load_causal_lm(source, what="critic_model")
            lm.to(_device(self.policy.model))
            upcast_trainable(lm)  # its target copy computes as the trained critic will
        return ValueHeadModel(lm, num_heads=3)

    @property
    def critic_tokenizer(self) -> Tokenizer:
        """The critic's tokenizer: the policy's, or ``critic_model``'s own once it is loaded."""
        return self.policy.tokenizer if self._critic_tokenizer is None else self._critic_tokenizer

    def critic_inputs(self, buffer: Sequence[Trajectory]) -> list[str]:
        """Return each turn's state as the critic reads it (``V``'s input), in turn order.

        Raises:
            ValueError: With ``critic_uses_reference``, if a trajectory's reference has
                no ``ground_truth`` (the message names the trajectory).

        """
        return [state for item in self._critic_items(buffer) for state in item.states]

    def fit_critic(self, buffer: TrajectoryBuffer | Sequence[Trajectory]) -> dict[str, float]:
        """Train the critic by TD learning on the buffer's transitions (the ``"critic"`` stage).

        ``critic_batch_size`` trajectories go through the critic at a time. With
        ``value_samples > 0`` the policy first samples that many actions per turn
        (:meth:`sample_value_actions`, cached in the run directory) for ``V``'s target.

        Returns:
            The stage's metrics: ``critic/loss``, ``critic/q_loss``, ``critic/v_loss``,
            ``critic/q_mean``, ``critic/v_mean``, ``critic/v_target_mean``, ...

        """
        items = self._critic_items(buffer)  # checks the references before any sampling
        with self._session([t.to_dict() for t in buffer]):
            if self.config.value_samples:
                # Once per fit, not per epoch: the policy is fixed until the actor stage,
                # so new samples would only average more draws of the same pi, at the
                # price of a generation pass (the slowest part on a CPU) per epoch. The
                # moving target still scores them afresh at every step.
                self._ensure_critic()  # a bad setting fails before the sampling
                journal = self.trainer.journal_dir("archer_value_actions")
                sampled = self.trainer.cached(
                    "archer_value_actions",
                    lambda: self.sample_value_actions(buffer, journal=journal),
                )
                items = [
                    replace(item, value_actions=tuple(tuple(a) for a in actions))
                    for item, actions in zip(items, sampled)
                ]
            try:
                return self.run_stage(self._critic_stage(items))
            finally:
                self._target = None  # a whole model copy: free it once the stage is over

    def sample_value_actions(
        self, buffer: Sequence[Trajectory], *, journal: str | Path | None = None
    ) -> list[list[list[str]]]:
        """Sample ``value_samples`` actions from the policy for every turn (``V``'s targets).

        The prompts are the turns' prompts as the actor reads them (the policy's system
        prompt and chat template). Turns are split across processes (every process must
        call this) and every process gets all the actions.

        Args:
            buffer: The trajectories whose turns get actions.
            journal: A folder logging finished chunks, so a stopped call resumes there
                (see :func:`algorithms.distributed.map_sharded`).

        Returns:
            Per trajectory, per turn, ``value_samples`` actions.

        """
        turns = [turn for trajectory in buffer for turn in trajectory.turns]
        if not turns or not self.config.value_samples:
            return [[[] for _ in trajectory.turns] for trajectory in buffer]
        with self._session([t.to_dict() for t in buffer]):
            bar = tqdm(
                total=len(turns),
                desc="value actions",
                disable=not (self.config.progress and process_state().is_main_process),
            )

            def sample(chunk: list[Turn]) -> list[list[str]]:
                return self.policy.generate(
                    self.policy_prompts(chunk),
                    n=self.config.value_samples,
                    temperature=self.config.value_temperature,
                    max_new_tokens=self.config.value_max_new_tokens,
                )

            try:
                actions = map_sharded(
                    turns,
                    sample,
                    batch_size=self.policy.batch_size,
                    journal=journal,
                    progress=bar,
                )
            finally:
                bar.close()
        return split_by_lengths(actions, [len(trajectory.turns) for trajectory in buffer])

    @torch.no_grad()
    def critic_values(self, buffer: Sequence[Trajectory]) -> torch.Tensor:
        """Return the critic's values of every turn, in ``buffer.turns()`` order.

        Under many processes the trajectories are split across them (every process
        must call this) and every process gets all the values.

        Returns:
            ``(num_turns, 3)`` float32 on the CPU: columns Q1, Q2 (read on state + action)
            and V (read on the state).

        """
        items = self._critic_items(buffer)
        critic = self._ensure_critic()
        collate = self._collate_critic()
        was_training = critic.training
        critic.eval()

        def compute(chunk: list[CriticTrajectory]) -> list[list[list[float]]]:
            batch = collate(chunk)
            q, v = batch.read(critic)
            rows = torch.stack([q[:, _Q1], q[:, _Q2], v[:, _V]], 1).float().tolist()
            return split_by_lengths(rows, [len(item.actions) for item in chunk])

        try:
            per_trajectory = map_sharded(items, compute, batch_size=self.config.critic_batch_size)
        finally:
            reshard(critic)
            critic.train(was_training)
        rows = [row for values in per_trajectory for row in values]
        return torch.tensor(rows, dtype=torch.float32) if rows else torch.zeros((0, 3))

    def advantages(self, buffer: Sequence[Trajectory]) -> list[float]:
        """Return ``min(Q1, Q2)(s, a) - V(s)`` for every turn, in ``buffer.turns()`` order."""
        values = self.critic_values(buffer)
        return (double_q_min(values[:, _Q1], values[:, _Q2]) - values[:, _V]).tolist()

    def _critic_items(self, buffer: Sequence[Trajectory]) -> list[CriticTrajectory]:
        hint = REFERENCE_HINT if self.config.critic_uses_reference else None
        items = []
        for index, trajectory in enumerate(buffer):
            where = f"trajectory {index} (task {trajectory.task_id!r})"
            steps = build_transitions([trajectory])
            items.append(
                CriticTrajectory(
                    states=tuple(
                        critic_prompt(self.policy, t.turn, t.reference, hint, where=where)
                        for t in steps
                    ),
                    actions=tuple(t.turn.action for t in steps),
                    rewards=tuple(t.reward for t in steps),
                    dones=tuple(t.done for t in steps),
                )
            )
        return items

    def _collate_critic(self) -> Callable[[Sequence[CriticTrajectory]], CriticBatch]:
        """Return the critic's collate step, with the critic's tokenizer.

        Sampled actions go into the dialogues' rows as branches where the critic's
        attention takes a branch mask, else into plain rows of their own.
        """
        tokenizer = self.critic_tokenizer
        return collate_critic_trajectories(
            lambda dialogues: self.encode_dialogues(dialogues, tokenizer=tokenizer),
            lambda states, actions: self.encode(states, actions, tokenizer=tokenizer),
            branch_value_actions=branch_rows_supported(self._ensure_critic().lm),
        )

    def _critic_stage(self, items: list[CriticTrajectory]) -> Stage:
        critic = self._ensure_critic()
        # The target starts as a copy of the critic; made before ``prepare`` (a sharded
        # module cannot be deep-copied) and sharded like the critic in ``setup``.
        target = frozen_copy(critic)
        self._target = target

        def setup(prepared: torch.nn.Module, accelerator: Any) -> None:
            if accelerator.is_fsdp2:
                from accelerate.utils import fsdp2_prepare_model

                self._target = fsdp2_prepare_model(accelerator, self._target)
            # Start from the critic as it is now (a resumed stage restored it).
            soft_update(self._target, accelerator.unwrap_model(prepared), tau=1.0)

        def polyak(prepared: torch.nn.Module) -> None:
            from accelerate.utils import extract_model_from_parallel

            critic = extract_model_from_parallel(prepared)
            reshard(self._target)  # gathered by its forward (no backward): average shards
            soft_update(self._target, critic, tau=self.config.tau)

        return Stage(
            name="critic",
            namespace="critic",
            model=critic,
            items=items,
            loss=self._critic_loss,
            learning_rate=self.config.critic_learning_rate,
            num_epochs=self.config.critic_epochs,
            save=lambda trained, state, directory: trained.save(state, directory),
            load=lambda directory: critic.load(directory),
            batch_size=self.config.critic_batch_size,
            collate=self._collate_critic(),
            setup=setup,
            on_step=polyak,
            weigh=lambda batch: float(batch.size),  # a mean over turns
        )

    def _critic_loss(
        self, model: torch.nn.Module, batch: CriticBatch
    ) -> tuple[torch.Tensor, dict[str, float]]:
        q, v = batch.read(model)
        q1, q2, v = q[:, _Q1], q[:, _Q2], v[:, _V]
        # The target under the training's autocast, as the prepared critic's forward runs.
        with torch.no_grad(), self.trainer.autocast():
            target_q, target_v, sampled_q = batch.read_with_value_actions(self._target)
            following = batch.next_turn.to(v.device)
            next_v = torch.where(
                following >= 0, target_v[following.clamp(min=0), _V], torch.zeros_like(v)
            )
            rewards, dones = batch.rewards.to(v.device), batch.dones.to(v.device)
            q_target = td_targets(rewards, next_v, dones, gamma=self.config.gamma)
            if sampled_q is not None:  # E_{a ~ pi}: the policy's sampled actions
                sampled_q = sampled_q.to(v.device)
                v_target = sampled_value_targets(sampled_q[..., _Q1], sampled_q[..., _Q2])
            else:  # value_samples=0: the buffer's action
                v_target = double_q_min(target_q[:, _Q1], target_q[:, _Q2])
        q_loss = value_regression_loss(q1, q_target) + value_regression_loss(q2, q_target)
        v_loss = value_regression_loss(v, v_target)
        diagnostics = {
            "q_loss": float(q_loss.detach()),
            "v_loss": float(v_loss.detach()),
            "q_mean": float(double_q_min(q1, q2).detach().mean()),
            "v_mean": float(v.detach().mean()),
            "v_target_mean": float(v_target.mean()),
        }
        return q_loss + v_loss, diagnostics

    # -- the actor ---------------------------------------------------------------------

    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Fit the critic (TD), then the actor on its standardised advantages."""
        critic_metrics = self.fit_critic(buffer)
        if self.trainer.stopped:
            return critic_metrics
        advantages = self.trainer.cached("archer_advantages", lambda: self.advantages(buffer))
        weights = torch.tensor(advantages, dtype=torch.float64)
        if self.config.normalise_advantages:
            weights = (weights - weights.mean()) / (weights.std(unbiased=False) + 1e-8)
        lengths = [len(trajectory.turns) for trajectory in buffer]
        items = [
            ActorExample(
                prompts=tuple(self.policy_prompts(trajectory.turns)),
                actions=tuple(turn.action for turn in trajectory.turns),
                advantages=tuple(turn_advantages),
                weights=tuple(turn_weights),
            )
            for trajectory, turn_advantages, turn_weights in zip(
                buffer,
                split_by_lengths(advantages, lengths),
                split_by_lengths(weights.tolist(), lengths),
            )
        ]
        stage = self.policy_stage(
            "policy",
            items,
            self._policy_loss,
            collate_actor_examples(self.encode_dialogues),
            # A mean over action tokens (see _policy_loss): weigh processes by their tokens.
            weigh=lambda batch: float(batch.turns.action_mask.sum()),
        )
        policy_metrics = self.run_stage(stage)
        return {
            **critic_metrics,
            **policy_metrics,
            "critic/num_transitions": float(sum(lengths)),
        }

    def _policy_loss(
        self, model: CausalLM, batch: ActorBatch
    ) -> tuple[torch.Tensor, dict[str, float]]:
        logps = turn_logprobs(model, batch.turns)
        # A token mean: summed log-probs of whole utterances made the logged loss swing
        # by hundreds; one positive divisor keeps the gradient's direction.
        loss = advantage_weighted_policy_loss(
            logps.sum,
            batch.weights.to(logps.sum.device, logps.sum.dtype),
            num_tokens=logps.num_tokens,
        )
        return loss, {"advantage_mean": float(batch.advantages.mean())}

    # -- persistence -------------------------------------------------------------------

    def save_components(self, directory: Path, main: bool) -> None:
        """Write the critic (``critic/``) beside the policy."""
        if self.critic is None:
            return
        state = full_state_dict(self.critic)
        if not main:
            return
        self.critic.save(state, directory / "critic")
        if self.config.critic_model is not None:
            self.critic_tokenizer.save_pretrained(str(directory / "critic" / "lm"))

    def load_components(self, directory: Path) -> None:
        """Read the critic ``save_components`` wrote."""
        saved = directory / "critic"
        if not saved.exists():
            return
        # The saved copy of critic_model: the original may not exist where this is loaded.
        critic = self._new_critic(None if self.config.critic_model is None else saved / "lm")
        critic.load(saved)
        self.critic = critic


def _device(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device
