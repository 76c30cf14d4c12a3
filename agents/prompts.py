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
    "SHORT_BACKEND_AGENT_PROMPT",
    "SHORT_FRONTEND_AGENT_PROMPT",
    "EnvironmentPrompt",
    "agent_prompt_for",
    "prompt_for",
    "with_system_prompt",
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
