"""The simulated-human protocol."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Simulator", "SimulatorError", "user_said"]


class SimulatorError(RuntimeError):
    """A simulator could not produce a reply (endpoint down, bad response, ...)."""


@runtime_checkable
class Simulator(Protocol):
    """Plays the human in a collaborative episode.

    A simulator is a function of the task and the dialogue so far: given the same task
    and messages it should give the same reply (which is what makes replies cacheable
    and evaluations reproducible). It sees the task's hidden information; the agent
    does not.

    Attributes:
        name: Identifies the simulator and its settings (used in cache keys and logs).

    """

    name: str

    def reply(self, task: Any, messages: Sequence[Mapping[str, str]]) -> str:
        """Return the human's next message.

        Args:
            task: The task being played (e.g. a :class:`~sweetrl_gym.tasks.BackendTask`).
            messages: The whole chat so far in OpenAI format, starting with the human's
                request and ending with the agent's latest message.

        Returns:
            The reply text (the environment cuts it to the official length).

        Raises:
            SimulatorError: When no reply can be produced.

        """
        ...


def user_said(messages: Sequence[Mapping[str, str]]) -> str:
    """Return everything the human said in a dialogue: their messages, joined by spaces."""
    return " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
