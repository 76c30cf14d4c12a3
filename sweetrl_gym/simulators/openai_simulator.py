"""The LLM simulated human, served by any OpenAI-compatible chat endpoint."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from sweetrl_gym.lm import (
    ChatAPIError,
    ChatClient,
    check_client,
    check_int,
    check_temperature,
)
from sweetrl_gym.simulators.base import SimulatorError
from sweetrl_gym.simulators.prompts import (
    HUMAN_SIMULATOR_PROMPT,
    OFFICIAL_MAX_TOKENS,
    check_human_prompt,
    simulator_messages,
)

__all__ = ["NO_RESPONSE", "OpenAISimulator"]

logger = logging.getLogger(__name__)

NO_RESPONSE = "No response."
"""What the official simulator answers when its API call fails."""

ON_ERROR = ("raise", "no_response", "official")
"""What a simulated human does when its endpoint fails: ``"raise"`` (a
:class:`SimulatorError`), ``"no_response"`` (answer :data:`NO_RESPONSE` whatever the
failure) or ``"official"`` (the official code's rule: :data:`NO_RESPONSE` on HTTP 400
only, a refused request such as a prompt longer than the model's context; any other
failure, a server down or timing out, raises)."""


def check_on_error(on_error: object) -> str:
    """Return ``on_error`` if it is one of :data:`ON_ERROR`; refuse anything else."""
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
    return str(on_error)


def human_failure(name: str, client: ChatClient, on_error: str, err: ChatAPIError) -> str:
    """Return what a human whose request failed says, or raise under its rule.

    Raises:
        SimulatorError: Naming the endpoint and model, unless ``on_error`` answers
            :data:`NO_RESPONSE` for this failure.

    """
    if on_error == "no_response" or (on_error == "official" and err.status == 400):
        logger.warning("simulated human %s answers %r: %s", name, NO_RESPONSE, err)
        return NO_RESPONSE
    raise SimulatorError(
        f"simulated human {name} at {client.base_url} could not reply: {err} (on_error="
        f"{on_error!r}; on_error='no_response' answers 'No response.' on any failure instead)"
    ) from err


class OpenAISimulator:
    """A simulated human played by an LLM (the paper used Llama-3.1-70B-Instruct).

    ``prompt_format="ours"`` (the default): the model gets
    :data:`~sweetrl_gym.simulators.prompts.HUMAN_SIMULATOR_PROMPT` with the task's
    reference solution as hidden information, then the dialogue with roles swapped (it
    plays the user); 256 tokens. ``prompt_format="official"``: the official prompt file
    filled in as one user message, 4,096 tokens, as the paper's pipeline asks; ours
    exists because that text is CC-BY-NC (see :mod:`sweetrl_gym.simulators.prompts`).
    Both sample at temperature 0; the environment cuts replies to 400 characters::

        prompt = read_official_prompt("sweet_rl/prompts/human_simulator_code_prompt.txt")
        human = OpenAISimulator(client, prompt_format="official", prompt=prompt)

    A failing endpoint raises :class:`SimulatorError`: an episode whose human said
    nothing is not a valid data point. ``on_error="official"`` is the official code's
    rule (``"No response."`` on HTTP 400, raise otherwise); ``"no_response"`` answers
    ``"No response."`` on any failure (see :data:`ON_ERROR`).

    Args:
        client: The endpoint (:class:`~sweetrl_gym.lm.chat_api.ChatClient`: server, model,
            key, timeouts and retries), built once and shared by agents, simulators and
            judges.
        prompt: Ours: the instructions, with a ``{hidden_information}`` field.
            Official: your copy of the official file's text
            (:func:`~sweetrl_gym.simulators.prompts.read_official_prompt`).
        prompt_format: ``"ours"`` or ``"official"`` (how the request is built).
        temperature: Sampling temperature (official: 0, so replies are reproducible).
        max_tokens: Most tokens per reply; ``None``: the format's own (ours 256,
            official 4,096).
        on_error: ``"raise"``, ``"no_response"`` or ``"official"`` (:data:`ON_ERROR`).

    Raises:
        ValueError: If an argument is invalid.

    """

    def __init__(
        self,
        client: ChatClient,
        *,
        prompt: str = HUMAN_SIMULATOR_PROMPT,
        prompt_format: str = "ours",
        temperature: float = 0.0,
        max_tokens: int | None = None,
        on_error: str = "raise",
    ):
        check_on_error(on_error)
        check_human_prompt(prompt, prompt_format, "backend")
        check_temperature(temperature)
        if max_tokens is None:
            max_tokens = OFFICIAL_MAX_TOKENS if prompt_format == "official" else 256
        check_int("max_tokens", max_tokens)
        self.client = check_client(client)
        self.prompt = prompt
        self.prompt_format = prompt_format
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.on_error = on_error
        prompt_hash = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]
        official = ",format=official" if prompt_format == "official" else ""
        # Everything that changes the replies goes in the name: caches are keyed by it.
        self.name = (
            f"openai:{self.client.model}(prompt={prompt_hash}{official},"
            f"temperature={temperature:g},max_tokens={max_tokens})"
        )

    def __repr__(self) -> str:
        return f"OpenAISimulator({self.client.base_url!r}, {self.name!r})"

    def reply(self, task: Any, messages: Sequence[Mapping[str, str]]) -> str:
        """Ask the model for the human's next message.

        Args:
            task: The task being played; its ``ground_truth`` is the hidden information.
            messages: The episode's chat so far, ending with the agent's message.

        Raises:
            SimulatorError: If the endpoint fails and ``on_error`` says to raise.
            ValueError: If ``messages`` is empty.

        """
        if not messages:
            raise ValueError("messages must end with the agent's message")
        chat = simulator_messages(task, messages, self.prompt, prompt_format=self.prompt_format)
        try:
            return self.client.complete(
                chat, temperature=self.temperature, max_tokens=self.max_tokens
            )
        except ChatAPIError as err:
            return human_failure(self.name, self.client, self.on_error, err)
