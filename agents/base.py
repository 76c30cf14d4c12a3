"""The agent protocol: one reply per conversation in a batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Agent", "Message", "PrivilegedAgent"]

Message = Mapping[str, str]


@runtime_checkable
class Agent(Protocol):
    """A policy: given one OpenAI-format message list per environment, reply to each.

    Writing your own agent is a class with this one method::

        class EchoAgent:
            def act(self, batch):
                return ["I WANT TO ANSWER: def f(): return 1" for _ in batch]

    Each conversation starts with a system message, the environment's agent prompt
    (:data:`~agents.BACKEND_AGENT_PROMPT` on the Backend), then the human's request. An
    agent with its own instructions sets an attribute ``own_system_prompt = True``: it
    then gets the conversation as the environment has it, request first (see
    :mod:`agents.prompts`).

    An agent that makes random choices can make every episode reproducible on its own,
    whatever the batching: with a class attribute ``seeded_per_episode = True``,
    :func:`~agents.collect` passes ``act(batch, seeds=[...])``, one seed per
    conversation (its episode's), from which the agent draws that conversation's
    choices (see :class:`~agents.RandomAgent`).
    """

    def act(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Return one message per conversation, in order."""
        ...


@runtime_checkable
class PrivilegedAgent(Protocol):
    """An agent that also reads the training-time information (``info["reference"]``).

    Only baselines and upper bounds are privileged: it is cheating for a policy.
    Rollouts hand ``references`` only to agents whose ``privileged`` attribute is True.
    """

    privileged: bool

    def act(
        self, batch: Sequence[Sequence[Message]], references: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        """Return one message per conversation, given each episode's reference."""
        ...
