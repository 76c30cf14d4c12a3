"""The acting agent's system prompt, and how rollouts hand it to an agent.

Every environment names the prompt of the agent that plays it
(``env.unwrapped.agent_prompt``: :data:`BACKEND_AGENT_PROMPT` on the Backend,
:data:`FRONTEND_AGENT_PROMPT` on the Frontend). An agent that has no prompt of its own
gets it from the rollout (:func:`~agents.collect`, :func:`~agents.evaluate`,
``sweetrl play``) as the first message of each conversation, ``{"role": "system", ...}``;
an agent whose ``own_system_prompt`` attribute is true keeps its own (or none) and gets
the conversation as the environment has it. :class:`~agents.TransformersAgent` and
:class:`~agents.OpenAIAgent` have their own prompt exactly when their user gave one
(``system_prompt=``); scripted agents take none; a class of yours without the attribute
gets the environment's. ``info["messages"]`` and the recorded turns never hold it.

How an agent reads its own past turns is its ``history`` setting (:data:`HISTORIES`,
applied by :func:`agent_history` when the conversation is formatted, at act time and
when a recorded turn is formatted for training alike): ``"raw"`` (our default) keeps each
message as the agent sent it; ``"content"`` (the official agent's) keeps what the
official environment stores as the message's ``content``, the text between its first
and second ``OUTPUT:`` (the whole message when it has none), unstripped.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

from sweetrl_gym.envs.agent_prompts import (
    BACKEND_AGENT_PROMPT,
    FRONTEND_AGENT_PROMPT,
    SHORT_BACKEND_AGENT_PROMPT,
    SHORT_FRONTEND_AGENT_PROMPT,
    agent_prompt_for,
)

__all__ = [
    "BACKEND_AGENT_PROMPT",
    "ENVIRONMENT_PROMPT",
    "FRONTEND_AGENT_PROMPT",
    "HISTORIES",
    "SHORT_BACKEND_AGENT_PROMPT",
    "SHORT_FRONTEND_AGENT_PROMPT",
    "EnvironmentPrompt",
    "agent_history",
    "agent_prompt_for",
    "check_history",
    "official_content",
    "prompt_for",
    "with_system_prompt",
]


HISTORIES = ("raw", "content")
"""How an agent reads its own past messages: as sent, or as the official ``content``."""

_OUTPUT = "OUTPUT:"


def check_history(history: Any) -> str:
    """Return ``history`` if it is one of :data:`HISTORIES`.

    Raises:
        ValueError: Naming the value and the choices.

    """
    if history not in HISTORIES:
        raise ValueError(f"history must be one of {HISTORIES}, got {history!r}")
    return history


def official_content(message: str) -> str:
    """Return what the official environment keeps of an agent message as its ``content``.

    The text after the first ``OUTPUT:`` up to the second one (``split("OUTPUT:")[1]``),
    not stripped; a message without ``OUTPUT:`` is kept whole. Applying it twice gives
    the same text.
    """
    return message.split(_OUTPUT)[1] if _OUTPUT in message else message


def agent_history(
    messages: Sequence[Mapping[str, Any]], history: str = "raw"
) -> list[Mapping[str, Any]]:
    """Return the conversation as an agent with ``history`` reads it.

    Args:
        messages: An OpenAI-format conversation (``info["messages"]``, a turn's
            ``messages``), the agent's own messages as ``assistant`` ones.
        history: ``"raw"`` (every message as it is) or ``"content"`` (each ``assistant``
            message reduced to :func:`official_content`).

    Returns:
        A new list; messages left unchanged are shared.

    Raises:
        ValueError: If ``history`` is not one of :data:`HISTORIES`.

    """
    check_history(history)
    if history == "raw":
        return list(messages)
    return [
        {**m, "content": official_content(m["content"])}
        if m.get("role") == "assistant" and isinstance(m.get("content"), str)
        else m
        for m in messages
    ]


class EnvironmentPrompt(enum.Enum):
    """The type of :data:`ENVIRONMENT_PROMPT`."""

    ENVIRONMENT_PROMPT = "the environment's"

    def __repr__(self) -> str:
        return "ENVIRONMENT_PROMPT"


ENVIRONMENT_PROMPT = EnvironmentPrompt.ENVIRONMENT_PROMPT
"""``system_prompt=ENVIRONMENT_PROMPT`` (the model agents' default): no prompt of the
agent's own; each environment's is handed in by the rollout."""


def prompt_for(agent: object, env: Any) -> str | None:
    """Return the system prompt a rollout hands ``agent`` on ``env``, if any.

    Args:
        agent: Any agent.
        env: The environment it plays (wrapped or not), its class or its id.

    Returns:
        The environment's agent prompt (:func:`agent_prompt_for`), or ``None`` when the
        agent's ``own_system_prompt`` attribute is true (it brings its own prompt, or
        plays without one) or the environment names no prompt.

    """
    if getattr(agent, "own_system_prompt", False):
        return None
    return agent_prompt_for(env)


def with_system_prompt(
    messages: Sequence[Mapping[str, Any]], prompt: str | None
) -> list[Mapping[str, Any]]:
    """Return ``messages`` with ``prompt`` as a leading system message.

    A conversation that already starts with a system message, or a ``None`` prompt,
    leaves the messages as they are (a new list; the messages themselves are shared).

    Args:
        messages: An OpenAI-format conversation (``info["messages"]``).
        prompt: The system prompt (:func:`prompt_for`).

    """
    if prompt is None or (messages and messages[0].get("role") == "system"):
        return list(messages)
    return [{"role": "system", "content": prompt}, *messages]
