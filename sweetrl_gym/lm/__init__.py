"""The LLM runtime: local generation, chat clients, model servers and sampling.

What the local agent and simulated human, the OpenAI-compatible agents, simulators and
judges, and the comparison's served policies share, apart from the environments:

- :mod:`sweetrl_gym.lm.generation`: local causal LMs: placement, chat prompts, batched
  generation (:func:`generate_texts`) with a key/value :class:`PrefixCache`.
- :mod:`sweetrl_gym.lm.sampling`: the next token by one uniform draw a row (imports torch
  and transformers, so its names load on first use).
- :mod:`sweetrl_gym.lm.chat_api`: :class:`ChatClient`, the one client for
  OpenAI-compatible servers.
- :mod:`sweetrl_gym.lm.server`: :class:`ModelServer` starts and stops such a server.
- :mod:`sweetrl_gym.lm.types`: the annotation types :data:`CausalLM` and
  :data:`Tokenizer`.

Importing this package loads neither torch nor transformers, and sets nothing for the
process.
"""

from __future__ import annotations

from typing import Any

from sweetrl_gym.lm.chat_api import (
    ChatAPIError,
    ChatClient,
    TextCompletion,
    check_base_url,
    check_client,
    check_int,
    check_temperature,
)
from sweetrl_gym.lm.generation import (
    GenerationStats,
    PrefixCache,
    cache_arguments,
    chat_prompt,
    check_chat_tokenizer,
    generate_texts,
    left_pad,
    model_device,
    output_cache,
    padding_token_id,
    place_model,
    plain_causal_attention,
    stop_token_ids,
    weights_identity,
)
from sweetrl_gym.lm.server import ModelServer, check_server_command
from sweetrl_gym.lm.types import CausalLM, Tokenizer

__all__ = [
    "CausalLM",
    "ChatAPIError",
    "ChatClient",
    "GenerationStats",
    "InverseCdfSampler",
    "ModelServer",
    "PrefixCache",
    "TextCompletion",
    "Tokenizer",
    "cache_arguments",
    "chat_prompt",
    "check_base_url",
    "check_chat_tokenizer",
    "check_client",
    "check_int",
    "check_server_command",
    "check_temperature",
    "generate_texts",
    "left_pad",
    "model_device",
    "output_cache",
    "padding_token_id",
    "place_model",
    "plain_causal_attention",
    "sample_tokens",
    "sampling_processors",
    "stop_token_ids",
    "weights_identity",
]

_SAMPLING_NAMES = ("InverseCdfSampler", "sample_tokens", "sampling_processors")


def __getattr__(name: str) -> Any:
    """Load :mod:`sweetrl_gym.lm.sampling` (torch) when one of its names is first asked for."""
    if name in _SAMPLING_NAMES:
        from sweetrl_gym.lm import sampling

        return getattr(sampling, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
