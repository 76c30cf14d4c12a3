"""A local causal language model as the acting policy (Hugging Face transformers)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from agents.base import Message
from agents.prompts import (
    BACKEND_AGENT_PROMPT,
    ENVIRONMENT_PROMPT,
    EnvironmentPrompt,
    agent_history,
    check_history,
)
from sweetrl_gym.lm import (
    CausalLM,
    GenerationStats,
    PrefixCache,
    Tokenizer,
    chat_prompt,
    check_chat_tokenizer,
    generate_texts,
    place_model,
    weights_identity,
)
from sweetrl_gym.messages import validate_messages

if TYPE_CHECKING:
    from agents.served import ServedModel

__all__ = ["TransformersAgent"]

logger = logging.getLogger(__name__)

_SEED_STRIDE = 1_000_003  # spreads per-call seeds of nearby agent seeds apart
_SEED_MOD = 2**63 - 1


class TransformersAgent:
    """Plays ColBench with a local causal LM: chat template in, batched generation out.

    Each conversation is rendered with the tokenizer's chat template after the system
    prompt, then the batch is generated in chunks of ``batch_size``, left-padded and
    sorted by length (less padding); replies come back in the input order. The exact
    prompt strings of the latest :meth:`act` call are kept in :attr:`last_prompts` (the
    official trajectory ``input`` field).

    Sampling follows the official agent: temperature 1.0, no top-k, up to 1,024 new
    tokens. ``temperature=0`` decodes greedily.

    Inside :meth:`prefix_caching` (which :func:`agents.collect` enters), the key/value
    states of earlier prompts and replies are reused, so each turn computes only the
    tokens that are new since the conversation's previous turn.

    After :meth:`serve_from`, generation goes through an OpenAI-compatible server that
    holds the same weights (vLLM, ``transformers serve``; see :mod:`agents.served`) for as
    long as the local weights stay unchanged.

    Args:
        model: A ``transformers`` causal LM (anything with ``generate``).
        tokenizer: Its tokenizer; it must have a chat template.
        system_prompt: The agent's own system prompt, put before every conversation that
            has no system message of its own (``None``: none at all). The default,
            :data:`~agents.prompts.ENVIRONMENT_PROMPT`: no prompt of its own; rollouts
            hand in each environment's as the conversation's system message (see
            :mod:`agents.prompts`), and a conversation without one (a stored turn
            formatted for training) gets :data:`~agents.prompts.BACKEND_AGENT_PROMPT`,
            which :attr:`system_prompt` then holds. If the chat template rejects a
            system role, the prompt is folded into the first user message.
        temperature: Sampling temperature; 0 means greedy.
        top_p: Nucleus sampling mass in (0, 1].
        max_new_tokens: Most tokens generated per reply.
        batch_size: Conversations generated together.
        device: Where to put the model; ``None``: the ``accelerate`` device unless the
            model is already dispatched (``hf_device_map``) or off the CPU.
        seed: Makes sampling reproducible: agents with the same seed, given the same
            calls, give the same replies. The global random state is left untouched.
        history: How the agent reads its own past messages (:data:`~agents.prompts.HISTORIES`):
            ``"raw"`` as sent, or ``"content"`` as the official agent does (the text
            between the first and second ``OUTPUT:``). :meth:`format_prompts` applies it,
            so a recorded turn formatted for training reads what the agent read.

    Attributes:
        model: The language model.
        tokenizer: The tokenizer.
        name: The model's name or path.
        system_prompt: The prompt put before a conversation without a system message.
        own_system_prompt: Whether the agent keeps :attr:`system_prompt` on every
            environment: true when ``system_prompt`` was given, or changed since.
        last_prompts: The chat-templated prompt of each conversation of the last ``act``.
        history: ``"raw"`` or ``"content"`` (see ``history`` above).
        stats: What generation has cost so far (sequences, prompt, reused and
            generated tokens, seconds in ``model.generate``).
        streamer: ``None``, or a transformers streamer (``TextStreamer``) that shows a
            reply as it is generated, when one conversation is played at a time
            (``sweetrl play`` sets one).
        server: The :class:`~agents.served.ServedModel` generation goes through, or
            ``None`` (local generation).
        last_logprobs: The summed log-probability of each reply of the last ``act``
            under the weights that sampled it, where the server returned them (else
            ``None`` entries); rollouts record them as ``Turn.logprob``.

    """

    def __init__(
        self,
        model: CausalLM,
        tokenizer: Tokenizer,
        *,
        system_prompt: str | EnvironmentPrompt | None = ENVIRONMENT_PROMPT,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_new_tokens: int = 1024,
        batch_size: int = 8,
        device: Any = None,
        seed: int | None = None,
        history: str = "raw",
    ):
        _check_sampling(temperature, top_p, max_new_tokens)
        check_history(history)
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        check_chat_tokenizer(tokenizer)
        self.model = place_model(model, device)
        self.tokenizer = tokenizer
        self._prompt_given = not isinstance(system_prompt, EnvironmentPrompt)
        self.system_prompt = (
            BACKEND_AGENT_PROMPT if isinstance(system_prompt, EnvironmentPrompt) else system_prompt
        )
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.max_new_tokens = int(max_new_tokens)
        self.batch_size = int(batch_size)
        self.seed = seed
        self.history = history
        self.name = str(getattr(model, "name_or_path", "") or type(model).__name__)
        self.last_prompts: list[str] = []
        self.stats = GenerationStats()
        self.streamer: Any = None
        self.server: ServedModel | None = None
        self.last_logprobs: list[float | None] = []
        self._last_logprobs: list[list[float | None]] = []
        self._served_weights: tuple[Any, ...] | None = None
        self._calls = 0
        self._prefix_cache: PrefixCache | None = None

    @property
    def own_system_prompt(self) -> bool:
        """Whether rollouts leave the agent its own prompt (else they hand it the env's)."""
        return self._prompt_given or self.system_prompt != BACKEND_AGENT_PROMPT

    def serve_from(self, server: ServedModel | None) -> None:
        """Generate through ``server`` from now on (``None``: locally again).

        The server must hold the agent's current weights (e.g. serve the folder they
        were loaded from). Once they change (a training step), the agent generates
        locally again and logs a warning: a stale server would sample another policy.

        Args:
            server: Where generation goes.

        """
        self.server = server
        self._served_weights = None if server is None else weights_identity(self.model)

    def _serving(self) -> ServedModel | None:
        """Return the server, unless the weights changed since :meth:`serve_from`."""
        if self.server is not None and weights_identity(self.model) != self._served_weights:
            logger.warning(
                "the policy's weights changed since it was served by %r: generating locally",
                self.server,
            )
            self.serve_from(None)
        return self.server

    @contextlib.contextmanager
    def prefix_caching(self, max_bytes: int = 2**30) -> Iterator[PrefixCache]:
        """Reuse key/value states across calls for the duration of the block.

        A conversation sent again with a new message only computes the new tokens, and
        every conversation reuses the shared system prompt. The states belong to the
        current weights: the cache empties itself if they change, and is dropped on
        leaving the block (nested blocks share the outer one's cache).

        Args:
            max_bytes: Most memory the kept states may take (see
                :class:`~sweetrl_gym.lm.generation.PrefixCache`).

        Yields:
            The cache.

        """
        if self._prefix_cache is not None:
            yield self._prefix_cache
            return
        self._prefix_cache = PrefixCache(max_bytes)
        try:
            yield self._prefix_cache
        finally:
            self._prefix_cache = None

    def format_prompts(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Render each conversation with the system prompt and the chat template.

        The agent's own past messages are read as its :attr:`history` says.

        Args:
            batch: One OpenAI-format message list per conversation.

        Returns:
            The prompt strings, ending with the assistant generation prompt.

        Raises:
            TypeError, ValueError: If a conversation is not a non-empty list of
                ``{role, content}`` dicts with string contents.

        """
        return [
            self._format(validate_messages(messages, where=f"conversation {i}", text_only=True))
            for i, messages in enumerate(batch)
        ]

    def _format(self, messages: list[dict[str, str]]) -> str:
        messages = agent_history(messages, self.history)
        if messages and messages[0]["role"] == "system":  # the conversation brings its own
            return chat_prompt(self.tokenizer, messages, None)
        return chat_prompt(self.tokenizer, messages, self.system_prompt)

    def act(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Reply to every conversation (sampled with the agent's settings).

        Args:
            batch: One OpenAI-format message list per conversation.

        Returns:
            One reply per conversation, in order (the generated text only).

        """
        prompts = self.format_prompts(batch)
        self.last_prompts = prompts
        texts = [replies[0] for replies in self.generate(prompts)]
        self.last_logprobs = [row[0] for row in self._last_logprobs]
        return texts

    def generate(
        self,
        prompts: Sequence[str],
        *,
        n: int = 1,
        temperature: float | None = None,
        top_p: float | None = None,
        max_new_tokens: int | None = None,
    ) -> list[list[str]]:
        """Sample ``n`` completions of each already-formatted prompt.

        Args:
            prompts: Prompt strings, e.g. from :meth:`format_prompts` or a trajectory's
                recorded ``input``.
            n: Completions per prompt.
            temperature: Overrides the agent's temperature (0: greedy).
            top_p: Overrides the agent's ``top_p``.
            max_new_tokens: Overrides the agent's ``max_new_tokens``.

        Returns:
            ``n`` completions per prompt, in the prompts' order.

        Raises:
            ValueError: On a prompt that is not a non-empty str, or bad settings.

        """
        temperature = self.temperature if temperature is None else float(temperature)
        top_p = self.top_p if top_p is None else float(top_p)
        max_new_tokens = self.max_new_tokens if max_new_tokens is None else int(max_new_tokens)
        _check_sampling(temperature, top_p, max_new_tokens)
        if isinstance(prompts, str):
            raise ValueError("prompts must be a list of prompt strings, not one str")
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        for i, prompt in enumerate(prompts):
            if not isinstance(prompt, str) or not prompt:
                raise ValueError(f"prompt {i} must be a non-empty str, got {prompt!r:.80}")
        self._last_logprobs = [[None] * n for _ in prompts]
        if not prompts:
            return []
        self._calls += 1
        seed = None if self.seed is None else (self.seed * _SEED_STRIDE + self._calls) % _SEED_MOD
        server = self._serving()
        if server is not None:
            served = server.generate(
                list(prompts),
                n=n,
                temperature=temperature,
                top_p=top_p,
                max_new_tokens=max_new_tokens,
                seed=seed,
            )
            self._last_logprobs = [[c.logprob for c in row] for row in served]
            return [[c.text for c in row] for row in served]
        cache = self._prefix_cache
        if cache is None and n > 1:
            # The n samples of a prompt share its states: computed once, within this call
            # (the weights cannot change during it).
            cache = PrefixCache()
        flat = generate_texts(
            self.model,
            self.tokenizer,
            [p for p in prompts for _ in range(n)],
            temperature=temperature,
            top_p=top_p,
            max_new_tokens=max_new_tokens,
            batch_size=self.batch_size,
            seed=seed,
            prefix_cache=cache,
            stats=self.stats,
            streamer=self.streamer if len(prompts) * n == 1 else None,
        )
        return [flat[i * n : (i + 1) * n] for i in range(len(prompts))]


def _check_sampling(temperature: float, top_p: float, max_new_tokens: int) -> None:
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0: greedy), got {temperature}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
