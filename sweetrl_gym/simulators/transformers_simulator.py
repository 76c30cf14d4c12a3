"""A local causal language model plays the human (Hugging Face transformers).

torch and transformers are imported inside the methods, so importing
``sweetrl_gym`` stays light.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from sweetrl_gym.simulators.base import SimulatorError
from sweetrl_gym.simulators.prompts import HUMAN_SIMULATOR_PROMPT, simulator_messages

__all__ = ["TransformersSimulator"]


class TransformersSimulator:
    """A simulated human backed by a local chat model, decoding greedily (official: T=0).

    The model sees :data:`HUMAN_SIMULATOR_PROMPT` with the task's reference solution
    as hidden information, then the dialogue with roles swapped (it plays the user),
    and answers the agent's latest message. Greedy decoding makes replies a function
    of the task and the dialogue, as the :class:`Simulator` protocol asks.

    Args:
        model: A ``transformers`` causal LM.
        tokenizer: Its tokenizer; it must have a chat template.
        prompt: The instructions, with a ``{hidden_information}`` field.
        max_new_tokens: Most tokens per reply (the environment cuts replies to 400
            characters anyway).
        device: Where to put the model; ``None``: the ``accelerate`` device unless the
            model is already dispatched or off the CPU.

    Attributes:
        name: ``transformers:<model>(prompt=<hash>, max_new_tokens=<n>)``.

    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        prompt: str = HUMAN_SIMULATOR_PROMPT,
        max_new_tokens: int = 128,
        device: Any = None,
    ):
        if "{hidden_information}" not in prompt:
            raise ValueError("prompt must contain a {hidden_information} field")
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
        if not getattr(tokenizer, "chat_template", None):
            raise ValueError("tokenizer has no chat template; use an instruct model's tokenizer")
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else None
        self._pad_id = pad_id if pad_id is not None else tokenizer.eos_token_id
        if self._pad_id is None:
            raise ValueError("tokenizer has neither a pad nor an eos token; set one of them")
        self.model = _place(model, device)
        # Chat models often stop on an end-of-turn token listed only in generation_config.
        configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos = list(configured) if isinstance(configured, (list, tuple)) else [configured]
        self._eos_ids = sorted({i for i in [*eos, tokenizer.eos_token_id] if i is not None})
        self.tokenizer = tokenizer
        self.prompt = prompt
        self.max_new_tokens = int(max_new_tokens)
        model_name = getattr(model, "name_or_path", "") or type(model).__name__
        prompt_hash = hashlib.sha256(prompt.encode()).hexdigest()[:8]
        self.name = (
            f"transformers:{model_name}(prompt={prompt_hash}, max_new_tokens={max_new_tokens})"
        )

    def reply(self, task: Any, messages: Sequence[Mapping[str, str]]) -> str:
        """Answer the agent's latest message as the human who knows the reference.

        Raises:
            ValueError: If ``messages`` is empty.
            SimulatorError: If the model fails to generate.

        """
        if not messages:
            raise ValueError("messages must end with the agent's message")
        from jinja2.exceptions import TemplateError

        chat = simulator_messages(task, messages, self.prompt)
        try:
            text = self._template(chat)
        except TemplateError:  # e.g. "System role not supported": fold it into the first turn
            first = chat[1:2] or [{"role": "user", "content": ""}]
            merged = {"role": "user", "content": f"{chat[0]['content']}\n\n{first[0]['content']}"}
            text = self._template([merged, *chat[2:]])
        try:
            return self._generate(text).strip()
        except Exception as exc:  # any model failure is a simulator failure
            raise SimulatorError(f"{self.name} failed to generate a reply: {exc}") from exc

    def _template(self, chat: list[dict[str, str]]) -> str:
        return self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)

    def _generate(self, text: str) -> str:
        import torch

        ids = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")
        device = _device_of(self.model)
        input_ids = ids["input_ids"].to(device)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                out = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    pad_token_id=self._pad_id,
                    eos_token_id=self._eos_ids,
                )
        finally:
            self.model.train(was_training)
        return self.tokenizer.decode(out[0, input_ids.shape[1] :], skip_special_tokens=True)


def _device_of(model: Any) -> Any:
    device = getattr(model, "device", None)
    return device if device is not None else next(model.parameters()).device


def _place(model: Any, device: Any) -> Any:
    # Same rule as agents.TransformersAgent (which sweetrl_gym cannot import).
    if getattr(model, "hf_device_map", None):
        return model
    if device is None:
        if _device_of(model).type != "cpu":
            return model
        from accelerate import PartialState

        device = PartialState().device
    return model.to(device)
