"""SWEET-RL's critic: one object per way of keeping it, with its head inside.

:func:`make_critic` chooses the way once, from the config:

- :class:`AdapterCritic` (``lora_rank > 0``, no ``critic_model``): a second LoRA adapter,
  ``"critic"``, on the policy's frozen base. Its start is the base with adapters disabled.
- :class:`PolicyCopyCritic` (full fine-tuning, no ``critic_model``; the paper's): a copy of
  the policy. Its start is a second, frozen copy taken when the critic is built, so no
  later step of the policy can move it.
- :class:`SeparateCritic` (``critic_model``): a model of its own. Its start is a frozen
  copy of that model; the sampling policy it measures candidates against is the policy's
  model as it is (after a full fine-tuning step, the trained one).

The head (``critic_head``) lives inside: the paper's log-ratio, where a turn's advantage
is ``critic_beta x`` (the critic's minus a frozen model's mean token log-prob of the
action), or the ablation's value head, a scalar on the critic LM (no start, no baseline).
:class:`~algorithms.SweetRL` reaches the critic only through :class:`Critic`'s methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from agents.loading import load_model
from algorithms.batches import Dialogue, DialogueBatch, collate_dialogue_pairs
from algorithms.distributed import full_state_dict
from algorithms.logprobs import (
    TokenizedTurns,
    TurnLogProbs,
    encode_ranked_candidates,
    encode_response_spans,
    response_template,
    shared_prefix_turn_logprobs,
    turn_logprobs,
)
from algorithms.lora import (
    POLICY_ADAPTER,
    adapter_active,
    add_adapter,
    load_adapter_weights,
    save_adapter,
)
from algorithms.losses import (
    last_turn_scores,
    token_mean_scores,
    trajectory_scores,
    turn_advantage,
)
from algorithms.models import (
    ValueHeadModel,
    clone_model,
    frozen_copy,
    load_weights,
    save_causal_lm,
)
from algorithms.trainer import upcast_trainable

if TYPE_CHECKING:
    from algorithms.sweet_rl import SweetRL

__all__ = [
    "CANDIDATE_TOKENS",
    "CRITIC_ADAPTER",
    "CRITIC_HEADS",
    "CRITIC_SCORES",
    "CRITIC_TOKENS",
    "AdapterCritic",
    "Critic",
    "PolicyCopyCritic",
    "SeparateCritic",
    "make_critic",
]

CRITIC_ADAPTER = "critic"
"""The critic's LoRA adapter name on the policy's model (:class:`AdapterCritic`)."""

CRITIC_HEADS = ("log_ratio", "value")
"""Values of :attr:`~algorithms.SweetRLConfig.critic_head`."""

Frozen = tuple[nn.Module, Callable[[], AbstractContextManager[Any]]]
"""A frozen model and a maker of the context it computes in."""


def _turn_sum(values: torch.Tensor, _: Any, index: torch.Tensor, n: int) -> torch.Tensor:
    return trajectory_scores(values, index, n)


def _last_turn(values: torch.Tensor, _: Any, index: torch.Tensor, n: int) -> torch.Tensor:
    return last_turn_scores(values, index, n)


_TRAJECTORY_SCORES: dict[str, Callable[..., torch.Tensor]] = {
    "turn_sum": _turn_sum,
    "token_mean": token_mean_scores,  # (values, action token counts, index, n)
    "last_turn": _last_turn,
}
"""A trajectory's score from its turn values, by :attr:`~algorithms.SweetRLConfig.critic_score`."""

CRITIC_SCORES = tuple(_TRAJECTORY_SCORES)
"""Values of :attr:`~algorithms.SweetRLConfig.critic_score`."""

CANDIDATE_TOKENS = ("action", "official")
"""Values of :attr:`~algorithms.SweetRLConfig.candidate_tokens`: which tokens the critic's
score of a candidate averages (the candidate and its end token; or the official ranking
script's, :func:`algorithms.logprobs.encode_ranked_candidates`)."""

CRITIC_TOKENS = ("actions", "official")
"""Values of :attr:`~algorithms.SweetRLConfig.critic_tokens`: which tokens of a trajectory
the critic counts in training (each turn's action and end token; or the official
mask, :func:`algorithms.logprobs.encode_response_spans`)."""


class _Head(ABC):
    """What the critic outputs for a turn, and what that needs (a start, row layout)."""

    needs_start: bool
    """Whether the critic keeps a frozen start (the log-ratio measures against it)."""

    @abstractmethod
    def wrap(self, lm: nn.Module) -> nn.Module:
        """Return the trained module made of a causal LM."""

    @abstractmethod
    def start_values(self, critic: Critic, dialogues: Sequence[Dialogue]) -> list[list[float]]:
        """Each turn's reference value in the critic's loss."""

    @abstractmethod
    def encode(self, critic: Critic) -> Callable[[Any], Any]:
        """Return the tokenizer of a batch of ``(prompts, actions)`` dialogues."""

    @abstractmethod
    def turn_values(
        self,
        critic: Critic,
        model: nn.Module,
        batch: DialogueBatch,
        score: Callable[..., TurnLogProbs] = turn_logprobs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per-turn values and action token counts (``None`` where there are none)."""

    @abstractmethod
    def score(
        self,
        critic: Critic,
        hinted: list[str],
        plain: list[str],
        actions: list[str],
        sizes: list[int],
    ) -> list[float]:
        """Each action's score, turn by turn (``sizes``: actions per turn)."""

    @abstractmethod
    def save(self, model: nn.Module, state_dict: dict[str, Any], directory: Path) -> None:
        """Write the trained module's weights."""

    @abstractmethod
    def load(self, model: nn.Module, directory: Path) -> None:
        """Read what :meth:`save` wrote into ``model``."""


class _LogRatioHead(_Head):
    """The paper's head: ``critic_beta x`` (critic - frozen) mean token log-prob of the action."""

    needs_start = True

    def wrap(self, lm: nn.Module) -> nn.Module:
        return lm

    def start_values(self, critic: Critic, dialogues: Sequence[Dialogue]) -> list[list[float]]:
        model, context = critic.start()
        return critic.algorithm.frozen_turn_logprobs(
            model,
            dialogues,
            context=context,
            mean=critic.config.length_normalize,
            encode=critic.encode_dialogues,
        )

    def encode(self, critic: Critic) -> Callable[[Any], Any]:
        return critic.encode_dialogues

    def turn_values(
        self,
        critic: Critic,
        model: nn.Module,
        batch: DialogueBatch,
        score: Callable[..., TurnLogProbs] = turn_logprobs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        logps = score(model, batch.turns)
        values = critic.per_turn(logps)
        advantages = turn_advantage(
            values, batch.reference.to(values.device), beta=critic.config.critic_beta
        )
        return advantages, logps.num_tokens

    def score(
        self,
        critic: Critic,
        hinted: list[str],
        plain: list[str],
        actions: list[str],
        sizes: list[int],
    ) -> list[float]:
        # One turn's actions together: their shared prompt (with the hint, most of the
        # tokens) is read once per model; the baseline reads its own prompt the same way.
        ends = np.cumsum(sizes).tolist()
        flat: list[float] = []
        for begin, stop in [(a, b) for a, b in zip([0, *ends[:-1]], ends) if b > a]:
            encoded = critic.encode_candidates(hinted[begin:stop], actions[begin:stop])
            reference = critic.baseline_values(plain[begin:stop], actions[begin:stop])
            rows = len(encoded)
            batch = DialogueBatch(encoded, torch.arange(rows), reference.cpu(), rows)
            with critic.active():
                values, _ = self.turn_values(
                    critic, critic.model, batch, shared_prefix_turn_logprobs
                )
            flat += values.float().tolist()
        return flat

    def save(self, model: nn.Module, state_dict: dict[str, Any], directory: Path) -> None:
        save_causal_lm(model, state_dict, directory)

    def load(self, model: nn.Module, directory: Path) -> None:
        load_weights(model, directory)


class _ValueHead(_Head):
    """The ablation's head: a scalar on the critic LM at each turn's last token."""

    needs_start = False

    def wrap(self, lm: nn.Module) -> nn.Module:
        return ValueHeadModel(lm, 1)

    def start_values(self, critic: Critic, dialogues: Sequence[Dialogue]) -> list[list[float]]:
        return [[0.0] * len(d.actions) for d in dialogues]

    def encode(self, critic: Critic) -> Callable[[Any], Any]:
        # The value head reads each turn's last token: one row per turn.
        def encode(dialogues: Sequence[tuple[Sequence[str], Sequence[str]]]) -> Any:
            prompts = [p for ps, _ in dialogues for p in ps]
            actions = [a for _, acts in dialogues for a in acts]
            return critic.algorithm.encode(prompts, actions, max_length=critic.max_length)

        return encode

    def turn_values(
        self,
        critic: Critic,
        model: nn.Module,
        batch: DialogueBatch,
        score: Callable[..., TurnLogProbs] = turn_logprobs,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        encoded = batch.turns.to(next(model.parameters()).device)
        return model(encoded.input_ids, encoded.attention_mask)[:, 0], None

    def score(
        self,
        critic: Critic,
        hinted: list[str],
        plain: list[str],
        actions: list[str],
        sizes: list[int],
    ) -> list[float]:
        # Every row read whole, in micro-batches of the config's batch_size rows.
        size = critic.config.batch_size
        flat: list[float] = []
        for begin in range(0, len(actions), size):
            stop = min(begin + size, len(actions))
            encoded = critic.algorithm.encode(
                hinted[begin:stop], actions[begin:stop], max_length=critic.max_length
            )
            rows = len(encoded)
            batch = DialogueBatch(encoded, torch.arange(rows), torch.zeros(rows), rows)
            with critic.active():
                values, _ = self.turn_values(critic, critic.model, batch)
            flat += values.float().tolist()
        return flat

    def save(self, model: nn.Module, state_dict: dict[str, Any], directory: Path) -> None:
        model.save(state_dict, directory)

    def load(self, model: nn.Module, directory: Path) -> None:
        model.load(directory)


class Critic(ABC):
    """SWEET-RL's critic, kept one way (a subclass), its head chosen by ``critic_head``.

    Built by :func:`make_critic` (:meth:`~algorithms.SweetRL.build_critic`), which also
    builds the model: the trained module and, for the log-ratio head, its frozen start.

    Args:
        algorithm: The :class:`~algorithms.SweetRL` it belongs to (its config, policy and
            tokenization).

    Attributes:
        model: The trained module: a causal LM, a :class:`ValueHeadModel` (value head),
            or the policy's ``PeftModel`` whose ``"critic"`` adapter is the critic.
        start_model: The critic's frozen start as a model of its own; ``None`` where it
            has none (the value head) or it is the policy's base (LoRA).
        max_length: The longest row it reads (``critic_max_length``, else ``max_length``).

    """

    def __init__(self, algorithm: SweetRL):
        self.algorithm = algorithm
        self.config = algorithm.config
        self.head: _Head = _ValueHead() if self.config.critic_head == "value" else _LogRatioHead()
        self.max_length = self.config.critic_max_length or self.config.max_length
        self.start_model: nn.Module | None = None
        self.model = self._build()

    # -- the way it is kept ---------------------------------------------------------------

    @abstractmethod
    def _build(self) -> nn.Module:
        """Make the trained module (and the frozen start, where the head has one)."""

    def active(self) -> AbstractContextManager[Any]:
        """Return the context the critic runs and trains in."""
        return nullcontext()

    def start(self) -> Frozen:
        """Return the critic's frozen start: what its loss measures turn advantages against."""
        if self.start_model is None:
            raise RuntimeError("the value head has no start")
        return self.start_model, nullcontext

    def baseline(self) -> Frozen:
        """Return the sampling policy that a candidate's score is measured against."""
        return self.start()

    def save_weights(self, model: nn.Module, state_dict: dict[str, Any], directory: Path) -> None:
        """Write the trained module's weights (a stage's ``save``)."""
        self.head.save(model, state_dict, directory)

    def load_weights(self, directory: Path) -> None:
        """Read what :meth:`save_weights` wrote (a stage's ``load``)."""
        self.head.load(self.model, directory)

    def save(self, directory: Path, main: bool) -> None:
        """Write the critic to ``directory/critic`` and its start to ``directory/critic_start``.

        Called on every process (gathering sharded weights is collective); only the one
        with ``main`` writes.
        """
        state = full_state_dict(self.model)
        start = None if self.start_model is None else full_state_dict(self.start_model)
        if main:
            self.save_weights(self.model, state, directory / "critic")
            if start is not None:
                save_causal_lm(self.start_model, start, directory / "critic_start")

    def load(self, directory: Path) -> None:
        """Read what :meth:`save` wrote."""
        self.load_weights(directory / "critic")
        if self.start_model is not None:
            load_weights(self.start_model, directory / "critic_start")

    # -- what it computes -------------------------------------------------------------------

    def per_turn(self, logps: TurnLogProbs) -> torch.Tensor:
        """Mean (``length_normalize``) or summed token log-probs of each turn."""
        return logps.mean if self.config.length_normalize else logps.sum

    def start_values(self, dialogues: Sequence[Dialogue]) -> list[list[float]]:
        """Each turn's reference value in the critic's loss (the start's log-probs; value head: 0).

        Split across processes.
        """
        return self.head.start_values(self, dialogues)

    def collate(self) -> Callable[[Any], DialogueBatch]:
        """Return the collate step of trajectory pairs (:class:`~algorithms.DialoguePair`)."""
        return collate_dialogue_pairs(self.head.encode(self))

    def pair_scores(
        self, model: nn.Module, batch: DialogueBatch
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Scores of each pair's chosen (even dialogues) and rejected (odd) trajectory.

        A trajectory's score combines its turn values as ``critic_score`` says.
        """
        values, num_tokens = self.head.turn_values(self, model, batch)
        index = batch.dialogue_index.to(values.device)
        score = _TRAJECTORY_SCORES[self.config.critic_score]
        scores = score(values, num_tokens, index, batch.num_dialogues)
        return scores[0::2], scores[1::2]

    def score(
        self, hinted: list[str], plain: list[str], actions: list[str], sizes: list[int]
    ) -> list[float]:
        """Score actions, ``sizes[k]`` of turn ``k`` after those of the turns before it.

        Args:
            hinted: Each action's prompt as the critic reads it (with the hint).
            plain: Each action's prompt as the policy reads it (for the baseline).
            actions: The actions.
            sizes: How many actions each turn has.

        Returns:
            One score per action, in order (no gradients; the caller sets the precision).

        """
        return self.head.score(self, hinted, plain, actions, sizes)

    def encode_dialogues(
        self, dialogues: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> TokenizedTurns:
        """Tokenize trajectories for the critic's loss, counting ``critic_tokens``' tokens.

        ``"actions"``: each turn's action and end token, one packed row a dialogue
        (:meth:`~algorithms.base.Algorithm.encode_dialogues`). ``"official"``: the
        official critic's mask over the last turn's text
        (:func:`~algorithms.logprobs.encode_response_spans`).
        """
        if self.config.critic_tokens == "official":
            tokenizer = self.algorithm.policy.tokenizer
            return encode_response_spans(
                tokenizer,
                dialogues,
                template=response_template(tokenizer),
                max_length=self.max_length,
            )
        return self.algorithm.encode_dialogues(dialogues, max_length=self.max_length)

    def encode_candidates(self, hinted: Sequence[str], actions: Sequence[str]) -> TokenizedTurns:
        """Tokenize candidates for the critic's score, counting ``candidate_tokens``' tokens.

        ``"action"``: the candidate and its end token. ``"official"``: the official
        ranking script's, the generation prompt's tokens after the last end token and the
        candidate, no end token (:func:`~algorithms.logprobs.encode_ranked_candidates`).
        The baseline (:meth:`baseline_values`) counts the candidate and its end token
        either way.
        """
        if self.config.candidate_tokens == "official":
            return encode_ranked_candidates(
                self.algorithm.policy.tokenizer, hinted, actions, max_length=self.max_length
            )
        return self.algorithm.encode(hinted, actions, max_length=self.max_length)

    def baseline_values(self, plain: Sequence[str], actions: Sequence[str]) -> torch.Tensor:
        """Each action's log-prob under the sampling policy (:meth:`baseline`), unhinted."""
        rows = self.algorithm.encode(plain, actions, max_length=self.max_length)
        model, context = self.baseline()
        with context():
            logps = shared_prefix_turn_logprobs(model, rows)
        return self.per_turn(logps).float()


class AdapterCritic(Critic):
    """A second LoRA adapter on the policy's frozen base; its start is the bare base."""

    def _build(self) -> nn.Module:
        policy = self.algorithm.policy
        policy.model = add_adapter(policy.model, CRITIC_ADAPTER, self.config)
        return policy.model

    def active(self) -> AbstractContextManager[Any]:
        """Return the context with the critic's adapter active (and trainable)."""
        return adapter_active(self.model, CRITIC_ADAPTER)

    def start(self) -> Frozen:
        """Return the base with every adapter disabled: the critic's and the policy's start."""
        model = self.model
        return model, lambda: adapter_active(model, None)

    def save_weights(self, model: nn.Module, state_dict: dict[str, Any], directory: Path) -> None:
        """Write the critic's adapter in peft's format."""
        save_adapter(model, CRITIC_ADAPTER, state_dict, directory)

    def load_weights(self, directory: Path) -> None:
        """Read the critic's adapter."""
        load_adapter_weights(self.model, CRITIC_ADAPTER, directory)

    def load(self, directory: Path) -> None:
        """Read the critic's adapter; the policy's stays the active one."""
        super().load(directory)
        self.model.set_adapter(POLICY_ADAPTER)


class PolicyCopyCritic(Critic):
    """A copy of the policy (the paper's); its start, a frozen copy taken at the same time."""

    def _build(self) -> nn.Module:
        policy = self.algorithm.policy.model
        lm = clone_model(policy)
        if self.head.needs_start:
            self.start_model = frozen_copy(policy)
        return self.head.wrap(lm)


class SeparateCritic(Critic):
    """A model of its own (``critic_model``); its start, a frozen copy of it."""

    def _build(self) -> nn.Module:
        lm = load_model(self.config.critic_model, what="critic_model")
        lm.to(next(self.algorithm.policy.model.parameters()).device)
        upcast_trainable(lm)  # its start computes as the trained copy will
        if self.head.needs_start:
            self.start_model = frozen_copy(lm)
        return self.head.wrap(lm)

    def baseline(self) -> Frozen:
        """Return the policy's model as it is (LoRA: its base): no copy of it is kept."""
        algorithm = self.algorithm
        return algorithm.policy.model, algorithm.policy_reference


def make_critic(algorithm: SweetRL) -> Critic:
    """Build the critic of ``algorithm``'s config: the one way of keeping it that it names."""
    config = algorithm.config
    if config.critic_model is not None:
        return SeparateCritic(algorithm)
    if config.lora_rank:
        return AdapterCritic(algorithm)
    return PolicyCopyCritic(algorithm)
