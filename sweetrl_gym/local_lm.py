"""Local causal language models: placement, chat prompts and batched generation.

Shared by the acting agent (:class:`agents.TransformersAgent`) and the local simulated
human (:class:`sweetrl_gym.simulators.TransformersSimulator`). torch, transformers and
accelerate are imported inside the functions, so importing ``sweetrl_gym`` stays light.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "chat_prompt",
    "check_chat_tokenizer",
    "generate_texts",
    "model_device",
    "place_model",
]


def check_chat_tokenizer(tokenizer: Any) -> None:
    """Check that a tokenizer can format chats and pad batches.

    Raises:
        ValueError: If it has no chat template, or neither a pad nor an eos token.

    """
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no chat template; "
            "use an instruct model's tokenizer or set tokenizer.chat_template to a Jinja "
            "template (e.g. ChatML)"
        )
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is None:
        raise ValueError("tokenizer has neither a pad nor an eos token; set one of them")


def chat_prompt(tokenizer: Any, messages: Sequence[Mapping[str, str]], system: str | None) -> str:
    """Render a chat with the tokenizer's template, ending with the generation prompt.

    Args:
        tokenizer: A tokenizer with a chat template.
        messages: OpenAI-format messages (without the system prompt).
        system: A system prompt to put first, or ``None``. If the template rejects a
            system role (e.g. Gemma's), it is folded into the first user message.

    Returns:
        The prompt string.

    """
    from jinja2.exceptions import TemplateError

    chat = [{"role": m["role"], "content": m["content"]} for m in messages]
    if system is None:
        return _template(tokenizer, chat)
    try:
        return _template(tokenizer, [{"role": "system", "content": system}, *chat])
    except TemplateError:
        pass
    if chat and chat[0]["role"] == "user":
        first = {"role": "user", "content": f"{system}\n\n{chat[0]['content']}"}
        return _template(tokenizer, [first, *chat[1:]])
    return _template(tokenizer, [{"role": "user", "content": system}, *chat])


def _template(tokenizer: Any, chat: list[dict[str, str]]) -> str:
    return tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)


def place_model(model: Any, device: Any = None) -> Any:
    """Move ``model`` to ``device``, or to the ``accelerate`` device when none is given.

    A model dispatched across devices (``hf_device_map``) is never moved; with
    ``device=None`` neither is a model already off the CPU (the caller placed it).

    Args:
        model: A torch module.
        device: A torch device or its name, or ``None``.

    Returns:
        The model (moved in place).

    """
    if getattr(model, "hf_device_map", None):
        return model
    if device is None:
        if model_device(model).type != "cpu":
            return model
        from sweetrl_gym.processes import process_state

        device = process_state().device
    return model.to(device)


def model_device(model: Any) -> Any:
    """Return the device of the model's parameters."""
    device = getattr(model, "device", None)
    if device is None:
        device = next(model.parameters()).device
    return device


def generate_texts(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    *,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    batch_size: int,
    seed: int | None = None,
) -> list[str]:
    """Generate one completion per prompt string, in chunks, left-padded, order kept.

    Prompts are tokenized without special tokens (the chat template already has them),
    sorted by length so each chunk pads little, and decoded without special tokens.

    Args:
        model: A causal LM with ``generate``.
        tokenizer: Its tokenizer.
        prompts: Formatted prompt strings.
        temperature: 0 for greedy decoding, else the sampling temperature.
        top_p: Nucleus sampling mass (ignored when greedy).
        max_new_tokens: Most tokens per completion.
        batch_size: Prompts per ``generate`` call.
        seed: Seeds sampling (the global random state is restored afterwards).

    Returns:
        The completions, in the prompts' order.

    """
    import torch

    if not prompts:
        return []
    ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    pad_id = (
        tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    )
    settings: dict[str, Any] = {
        "max_new_tokens": max_new_tokens,
        "pad_token_id": pad_id,
        "eos_token_id": _eos_ids(model, tokenizer),
    }
    if temperature > 0:
        # top_k=0: no top-k cut (transformers' default is 50; the official agent has none).
        settings.update(do_sample=True, temperature=temperature, top_p=top_p, top_k=0)
    else:
        settings.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    device = model_device(model)
    order = sorted(range(len(prompts)), key=lambda i: len(ids[i]))
    out: list[str] = [""] * len(prompts)
    was_training = model.training
    model.eval()
    devices = [device] if device.type == "cuda" else []
    try:
        with torch.inference_mode(), torch.random.fork_rng(devices=devices):
            if seed is not None:
                torch.manual_seed(seed)
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                input_ids, attention_mask = _left_pad([ids[i] for i in chunk], pad_id, device)
                generated = model.generate(
                    input_ids=input_ids, attention_mask=attention_mask, **settings
                )
                new = generated[:, input_ids.shape[1] :]
                texts = tokenizer.batch_decode(new, skip_special_tokens=True)
                for i, text in zip(chunk, texts):
                    out[i] = text
    finally:
        model.train(was_training)
    return out


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    # Chat models often stop on an end-of-turn token listed only in generation_config.
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = list(configured) if isinstance(configured, (list, tuple)) else [configured]
    ids.append(tokenizer.eos_token_id)
    return sorted({i for i in ids if i is not None})


def _left_pad(rows: list[list[int]], pad_id: int, device: Any) -> tuple[Any, Any]:
    import torch

    width = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, tokens in enumerate(rows):
        if tokens:
            input_ids[row, width - len(tokens) :] = torch.tensor(tokens, dtype=torch.long)
            attention_mask[row, width - len(tokens) :] = 1
    return input_ids.to(device), attention_mask.to(device)
