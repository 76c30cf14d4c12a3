"""An agent backed by any OpenAI-compatible chat endpoint (vLLM, llama.cpp, hosted APIs)."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Sequence

from agents.base import Message
from agents.prompts import (
    BACKEND_AGENT_PROMPT,
    ENVIRONMENT_PROMPT,
    EnvironmentPrompt,
    agent_history,
    check_history,
)
from sweetrl_gym.lm import (
    ChatAPIError,
    ChatClient,
    check_client,
    check_int,
    check_temperature,
)
from sweetrl_gym.messages import validate_messages

__all__ = ["OpenAIAgent"]


class OpenAIAgent:
    """Replies with a model served behind ``POST {base_url}/chat/completions``.

    The conversations of a batch are sent concurrently (at most ``max_concurrency``
    requests at a time), so a batch of environments costs about one round trip.
    Defaults follow the official agent: the ColBench system prompt of the environment
    played, temperature 1.0 and at most 1,024 new tokens.

    Args:
        client: The endpoint (:class:`~sweetrl_gym.lm.chat_api.ChatClient`: server, model,
            key, timeouts and retries), built once and shared by agents, simulators and
            judges.
        system_prompt: The agent's own system prompt, put before each conversation that
            has no system message of its own; ``None`` sends the chat as is. The
            default, :data:`~agents.prompts.ENVIRONMENT_PROMPT`: no prompt of its own;
            rollouts hand in each environment's as the conversation's system message
            (see :mod:`agents.prompts`), and a conversation without one gets
            :data:`~agents.prompts.BACKEND_AGENT_PROMPT`, which :attr:`system_prompt`
            then holds.
        temperature: Sampling temperature.
        top_p: Nucleus sampling mass.
        max_tokens: Most tokens per reply.
        max_concurrency: Most requests in flight at once.
        history: How the agent reads its own past messages: ``"raw"`` (as sent) or
            ``"content"`` (the official agent's; see :func:`~agents.prompts.agent_history`).

    Attributes:
        system_prompt: The prompt put before a conversation without a system message.
        own_system_prompt: Whether the agent keeps :attr:`system_prompt` on every
            environment: true when ``system_prompt`` was given, or changed since.

    Raises:
        ValueError: If an argument is out of range.

    """

    def __init__(
        self,
        client: ChatClient,
        *,
        system_prompt: str | EnvironmentPrompt | None = ENVIRONMENT_PROMPT,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_tokens: int = 1024,
        max_concurrency: int = 16,
        history: str = "raw",
    ):
        check_history(history)
        self._prompt_given = not isinstance(system_prompt, EnvironmentPrompt)
        if isinstance(system_prompt, EnvironmentPrompt):
            system_prompt = BACKEND_AGENT_PROMPT
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise ValueError(
                f"system_prompt must be a string or None, got {type(system_prompt).__name__}"
            )
        check_int("max_concurrency", max_concurrency)
        check_int("max_tokens", max_tokens)
        check_temperature(temperature)
        check_temperature(top_p, name="top_p")
        self.client = check_client(client)
        self.name = f"openai:{self.client.model}"
        self.system_prompt = system_prompt
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.max_concurrency = max_concurrency
        self.history = history

    @property
    def own_system_prompt(self) -> bool:
        """Whether rollouts leave the agent its own prompt (else they hand it the env's)."""
        return self._prompt_given or self.system_prompt != BACKEND_AGENT_PROMPT

    def __repr__(self) -> str:
        return f"OpenAIAgent({self.client.base_url!r}, {self.client.model!r})"

    def act(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Return the model's reply to each conversation, in order.

        Args:
            batch: One OpenAI-format message list per environment.

        Raises:
            ChatAPIError: If a request failed; the message says which conversation.
            TypeError, ValueError: If a conversation is not a valid message list
                (checked before anything is sent).

        """
        if isinstance(batch, (str, bytes)) or not isinstance(batch, Sequence):
            raise TypeError(f"batch must be a list of conversations, got {type(batch).__name__}")
        chats = []
        for i, conversation in enumerate(batch):
            try:
                chat = validate_messages(conversation, where=f"conversation {i} of the batch")
            except (TypeError, ValueError) as err:
                raise type(err)(str(err)) from None
            chat = [dict(m) for m in agent_history(chat, self.history)]
            if self.system_prompt is not None and not (chat and chat[0]["role"] == "system"):
                chat.insert(0, {"role": "system", "content": self.system_prompt})
            chats.append(chat)
        if not chats:
            return []
        # After a failure the requests not yet sent are skipped: the batch fails anyway.
        abort = threading.Event()
        workers = min(self.max_concurrency, len(chats))
        with concurrent.futures.ThreadPoolExecutor(workers, "openai-agent") as pool:
            futures = [pool.submit(self._complete, chat, abort) for chat in chats]
        errors = [(i, f.exception()) for i, f in enumerate(futures) if f.exception() is not None]
        errors = [(i, err) for i, err in errors if not isinstance(err, _Skipped)]
        if not errors:
            return [future.result() for future in futures]
        i, err = errors[0]
        if not isinstance(err, ChatAPIError):
            raise err
        raise ChatAPIError(
            f"{self.name}: conversation {i} of the batch ({len(chats)}) failed: {err}",
            url=err.url,
            model=err.model,
            status=err.status,
            body_excerpt=err.body_excerpt,
            attempts=err.attempts,
        ) from err

    def _complete(self, chat: list[dict[str, str]], abort: threading.Event) -> str:
        if abort.is_set():
            raise _Skipped
        try:
            return self.client.complete(
                chat, temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens
            )
        except BaseException:
            abort.set()
            raise


class _Skipped(Exception):
    """A request not sent because another of the batch had failed."""
