"""A local causal language model plays the human (Hugging Face transformers).

torch and transformers are imported inside the methods, so importing
``sweetrl_gym`` stays light.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from sweetrl_gym.lm import (
    CausalLM,
    Tokenizer,
    chat_prompt,
    check_chat_tokenizer,
    generate_texts,
    place_model,
)
from sweetrl_gym.simulators.base import SimulatorError
from sweetrl_gym.simulators.prompts import (
    HUMAN_SIMULATOR_PROMPT,
    OFFICIAL_MAX_TOKENS,
    check_human_prompt,
    simulator_messages,
)

__all__ = ["TransformersSimulator"]


class TransformersSimulator:
    """A simulated human backed by a local chat model, decoding greedily (official: T=0).

    ``prompt_format="ours"`` (the default): the model sees :data:`HUMAN_SIMULATOR_PROMPT`
    with the task's reference solution as hidden information, then the dialogue with
    roles swapped (it plays the user), and answers the agent's latest message.
    ``"official"``: the official prompt file filled in as one user message (see
    :mod:`sweetrl_gym.simulators.prompts`; ours exists because that text is CC-BY-NC).
    Greedy decoding makes replies a function of the task and the dialogue, as the
    :class:`Simulator` protocol asks.

    Args:
        model: A ``transformers`` causal LM.
        tokenizer: Its tokenizer; it must have a chat template.
        prompt: Ours: the instructions, with a ``{hidden_information}`` field.
            Official: your copy of the official file's text
            (:func:`~sweetrl_gym.simulators.prompts.read_official_prompt`).
        prompt_format: ``"ours"`` or ``"official"`` (how the request is built).
        max_new_tokens: Most tokens per reply; ``None``: the format's own (ours 128,
            official 4,096). The environment cuts replies to 400 characters anyway.
        device: Where to put the model; ``None``: the ``accelerate`` device unless the
            model is already dispatched or off the CPU.

    Attributes:
        name: ``transformers:<model>(prompt=<hash>, max_new_tokens=<n>)`` (with
            ``format=official`` after the hash in the official format).

    """

    def __init__(
        self,
        model: CausalLM,
        tokenizer: Tokenizer,
        *,
        prompt: str = HUMAN_SIMULATOR_PROMPT,
        prompt_format: str = "ours",
        max_new_tokens: int | None = None,
        device: Any = None,
    ):
        check_human_prompt(prompt, prompt_format, "backend")
        if max_new_tokens is None:
            max_new_tokens = OFFICIAL_MAX_TOKENS if prompt_format == "official" else 128
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        check_chat_tokenizer(tokenizer)
        self.model = place_model(model, device)
        self.tokenizer = tokenizer
        self.prompt = prompt
        self.prompt_format = prompt_format
        self.max_new_tokens = int(max_new_tokens)
        model_name = getattr(model, "name_or_path", "") or type(model).__name__
        prompt_hash = hashlib.sha256(prompt.encode()).hexdigest()[:8]
        official = ", format=official" if prompt_format == "official" else ""
        self.name = (
            f"transformers:{model_name}(prompt={prompt_hash}{official}, "
            f"max_new_tokens={max_new_tokens})"
        )

    def reply(self, task: Any, messages: Sequence[Mapping[str, str]]) -> str:
        """Answer the agent's latest message as the human who knows the reference.

        Raises:
            ValueError: If ``messages`` is empty.
            SimulatorError: If the model fails to generate.

        """
        if not messages:
            raise ValueError("messages must end with the agent's message")
        chat = simulator_messages(task, messages, self.prompt, prompt_format=self.prompt_format)
        try:
            text = chat_prompt(self.tokenizer, chat[1:], system=chat[0]["content"])
            (reply,) = generate_texts(
                self.model,
                self.tokenizer,
                [text],
                temperature=0.0,
                top_p=1.0,
                max_new_tokens=self.max_new_tokens,
                batch_size=1,
            )
        except Exception as exc:  # any model failure is a simulator failure
            raise SimulatorError(f"{self.name} failed to generate a reply: {exc}") from exc
        return reply.strip()
