"""Local causal language models: placement, chat prompts and batched generation.

Shared by the acting agent (:class:`agents.TransformersAgent`) and the local simulated
human (:class:`sweetrl_gym.simulators.TransformersSimulator`). torch, transformers and
accelerate are imported inside the functions, so importing ``sweetrl_gym`` stays light.
Key/value states go to and come from transformers under its current name, ``cache``
(:func:`cache_arguments`, :func:`output_cache`): ``generate`` and a forward take a
``Cache`` and return it, and a :class:`PrefixCache` builds one from kept states.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sweetrl_gym.lm.types import CausalLM, Tokenizer

__all__ = [
    "GenerationStats",
    "PrefixCache",
    "cache_arguments",
    "chat_prompt",
    "check_chat_tokenizer",
    "generate_texts",
    "left_pad",
    "model_device",
    "output_cache",
    "padding_token_id",
    "place_model",
    "plain_causal_attention",
    "stop_token_ids",
    "weights_identity",
]


def weights_identity(model: CausalLM) -> tuple[Any, ...]:
    """Return what changes when ``model``'s weights do.

    The model, and each parameter's storage, dtype and in-place version counter (an
    optimizer step bumps it). Cheap (no tensor is read), so generation can check before
    each call that kept states or a served copy still belong to the current weights.
    """
    return (id(model), *((p.data_ptr(), p.dtype, p._version) for p in model.parameters()))


@dataclass
class GenerationStats:
    """Counts of the work :func:`generate_texts` did, summed over its calls.

    Attributes:
        sequences: Completions generated.
        generate_calls: ``model.generate`` calls (one per chunk of ``batch_size``).
        prompt_tokens: Tokens of the prompts.
        reused_tokens: Prompt tokens whose key/value states came from a
            :class:`PrefixCache` instead of being computed again.
        generated_tokens: New tokens, each completion counted up to and including its
            end-of-sequence token (the padding after it is not).
        seconds: Wall time spent in ``model.generate``.

    """

    sequences: int = 0
    generate_calls: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0


@dataclass(eq=False)
class _Entry:
    ids: Any  # numpy int64 array: the tokens whose states are kept
    states: Any  # tensor [layers, 2 (key, value), heads, len(ids), head_dim]

    @property
    def nbytes(self) -> int:
        return self.states.numel() * self.states.element_size()


class PrefixCache:
    """Key/value states of recent sequences, reused by prompts that start the same way.

    A multi-turn rollout sends each conversation again every turn, and every
    conversation starts with the same system prompt, so most prompt tokens were already
    run through the model in an earlier call. :func:`generate_texts` given a cache looks
    up each prompt's longest common token prefix with a kept sequence, computes only the
    rest, and keeps each prompt plus its completion for later calls. The states are those
    the model computed for exactly these tokens at these positions, so the result is the
    same as computing them again (up to floating-point rounding, as with any change of
    batch or padding).

    States are only valid for the weights that computed them: the cache empties itself
    when the model, its dtype or any parameter (by its in-place version counter)
    changes. Use one cache for one stretch of generation with fixed weights (as
    :meth:`agents.TransformersAgent.prefix_caching` does), not across training.

    Args:
        max_bytes: Most memory the kept states may take (least recently used sequences
            go first). A token costs ``2 * layers * kv_heads * head_dim`` numbers:
            23 KB in bf16 for SmolLM2-135M, so the default 1 GiB holds ~46,000 tokens.

    """

    def __init__(self, max_bytes: int = 2**30):
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes}")
        self.max_bytes = int(max_bytes)
        self._entries: list[_Entry] = []  # least recently used first
        self._owner: tuple[Any, ...] | None = None

    @property
    def num_tokens(self) -> int:
        """Tokens whose states are kept now."""
        return sum(len(entry.ids) for entry in self._entries)

    @property
    def num_bytes(self) -> int:
        """Memory the kept states take now."""
        return sum(entry.nbytes for entry in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every kept sequence."""
        self._entries = []
        self._owner = None

    def _bind(self, model: CausalLM) -> None:
        """Empty the cache if ``model`` is not the model (and weights) that filled it."""
        owner = weights_identity(model)
        if owner != self._owner:
            self._entries = []
            self._owner = owner

    def _lookup(self, ids: Any) -> tuple[_Entry | None, int]:
        """Return the kept sequence sharing the longest prefix with ``ids``, and its length."""
        best, best_length = None, 0
        for entry in self._entries:
            n = min(len(entry.ids), len(ids))
            differ = np.flatnonzero(entry.ids[:n] != ids[:n])
            length = int(differ[0]) if differ.size else n
            if length > best_length:
                best, best_length = entry, length
        if best is not None:  # most recently used now
            self._entries.remove(best)
            self._entries.append(best)
        return best, best_length

    def _add(self, ids: Any, states: Any) -> None:
        kept = []
        for entry in self._entries:  # a kept prefix of the new sequence is redundant
            covered = len(entry.ids) <= len(ids) and np.array_equal(
                entry.ids, ids[: len(entry.ids)]
            )
            if not covered:
                kept.append(entry)
        kept.append(_Entry(ids, states))
        total = sum(entry.nbytes for entry in kept)
        while total > self.max_bytes and kept:
            total -= kept.pop(0).nbytes
        self._entries = kept


def check_chat_tokenizer(tokenizer: Tokenizer) -> None:
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


def chat_prompt(
    tokenizer: Tokenizer, messages: Sequence[Mapping[str, str]], system: str | None
) -> str:
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


def _template(tokenizer: Tokenizer, chat: list[dict[str, str]]) -> str:
    return tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)


def place_model(model: CausalLM, device: Any = None) -> CausalLM:
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


def model_device(model: CausalLM) -> Any:
    """Return the device of the model's parameters."""
    device = getattr(model, "device", None)
    if device is None:
        device = next(model.parameters()).device
    return device


def generate_texts(
    model: CausalLM,
    tokenizer: Tokenizer,
    prompts: Sequence[str],
    *,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    batch_size: int,
    seed: int | None = None,
    prefix_cache: PrefixCache | None = None,
    stats: GenerationStats | None = None,
    streamer: Any = None,
) -> list[str]:
    """Generate one completion per prompt string, in chunks, left-padded, order kept.

    Prompts are tokenized without special tokens (the chat template already has them),
    sorted by the number of tokens to compute so each chunk pads little, and decoded
    without special tokens. Each completion stops at an end-of-sequence token (the
    tokenizer's and the model's generation config's); a chunk ends when all of its
    completions have stopped or reached ``max_new_tokens``.

    Args:
        model: A causal LM with ``generate``.
        tokenizer: Its tokenizer.
        prompts: Formatted prompt strings.
        temperature: 0 for greedy decoding, else the sampling temperature.
        top_p: Nucleus sampling mass (ignored when greedy).
        max_new_tokens: Most tokens per completion.
        batch_size: Prompts per ``generate`` call.
        seed: Seeds sampling (the global random state is restored afterwards).
        prefix_cache: Reuse (and keep) key/value states of earlier prompts and
            completions; ignored for models whose cache is not one plain key/value
            pair per layer (sliding windows, encoder-decoders).
        stats: Add this call's counts to it.
        streamer: A transformers streamer (``TextStreamer``) that shows the reply as it
            is generated; only for one prompt.

    Returns:
        The completions, in the prompts' order.

    Raises:
        ValueError: A streamer with more than one prompt.

    """
    import torch

    if not prompts:
        return []
    if streamer is not None and len(prompts) != 1:
        raise ValueError(f"a streamer shows one reply, not {len(prompts)}: pass one prompt")
    ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    pad_id = padding_token_id(tokenizer)
    eos_ids = stop_token_ids(model, tokenizer)
    settings: dict[str, Any] = {"pad_token_id": pad_id, "eos_token_id": eos_ids}
    if streamer is not None:
        settings["streamer"] = streamer
    # Greedy decoding for transformers either way: sampling is our processors' last step
    # (one uniform draw a row, not torch.multinomial's one a vocabulary entry), with the
    # official agent's settings: no top-k cut (transformers' default is 50).
    settings.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    if temperature > 0:
        from sweetrl_gym.lm.sampling import sampling_processors

        settings["logits_processor"] = sampling_processors(temperature, top_p)
    plain = plain_causal_attention(model)
    cache = prefix_cache if prefix_cache is not None and plain else None
    device = model_device(model)
    stats = stats if stats is not None else GenerationStats()
    out: list[str] = [""] * len(prompts)
    was_training = model.training
    model.eval()
    devices = [device] if device.type == "cuda" else []
    try:
        with (
            torch.inference_mode(),
            torch.random.fork_rng(devices=devices),
            _packed_cpu_decode_attention(model, device),
        ):
            if seed is not None:
                torch.manual_seed(seed)
            rows = [np.asarray(row, dtype=np.int64) for row in ids]
            found: list[tuple[_Entry | None, int]] = [(None, 0)] * len(rows)
            if cache is not None:
                cache._bind(model)
                found = [_reusable(cache, row) for row in rows]
            # Grouped by the tokens left to compute: what a chunk's prefill costs.
            order = sorted(range(len(rows)), key=lambda i: len(rows[i]) - found[i][1])
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                began = time.perf_counter()
                if cache is not None:
                    computed = _share_prefix(
                        model, cache, [rows[i] for i in chunk], pad_id, device, settings
                    )
                    for i in chunk:
                        found[i] = _reusable(cache, rows[i])
                    # Kept by earlier calls and chunks, or shared: computed once, not per row.
                    stats.reused_tokens += sum(found[i][1] for i in chunk) - computed
                new = _generate_chunk(
                    model,
                    [rows[i] for i in chunk],
                    [found[i] for i in chunk],
                    pad_id,
                    device,
                    settings,
                    max_new_tokens,
                    cache,
                    plain=plain,
                )
                stats.seconds += time.perf_counter() - began
                stats.generate_calls += 1
                texts = tokenizer.batch_decode(new, skip_special_tokens=True)
                for i, tokens, text in zip(chunk, new, texts):
                    out[i] = text
                    stats.sequences += 1
                    stats.prompt_tokens += len(rows[i])
                    stats.generated_tokens += len(tokens)
    finally:
        model.train(was_training)
    return out


def _reusable(cache: PrefixCache, row: Any) -> tuple[_Entry | None, int]:
    """Return the kept sequence to start ``row`` from and how many of its states to use."""
    entry, length = cache._lookup(row)
    return entry, min(length, len(row) - 1)  # the last prompt token's logits start the reply


_PACKED_SDPA = "sdpa_packed_gqa"
"""Our name for transformers' SDPA attention that never hands torch ``enable_gqa``."""


@contextlib.contextmanager
def _packed_cpu_decode_attention(model: CausalLM, device: Any) -> Iterator[None]:
    """Let a half-precision model on the CPU attend without torch's ``enable_gqa`` kernel.

    With no padding mask (one sequence, or rows of one length), transformers' SDPA
    attention asks torch for grouped-query attention with ``enable_gqa=True``, which on
    the CPU in bf16 takes ~7x longer than the same product with the query heads packed
    per key/value head (0.76 vs 0.10 ms per layer for one 1,000-token sequence): a
    sequence generated alone spent a fifth of its time there. transformers packs them
    itself whenever there is a mask, so for the duration of the block the model uses
    its own SDPA attention handed an all-true mask instead of none. Nothing changes for
    other models and devices, or where transformers lacks the attention registry.
    """
    import torch

    config = getattr(model, "config", None)
    dtype = next(model.parameters()).dtype
    if (
        device.type != "cpu"
        or dtype not in (torch.bfloat16, torch.float16)
        or getattr(config, "_attn_implementation", None) != "sdpa"
        or not _register_packed_sdpa()
    ):
        yield
        return
    config._attn_implementation = _PACKED_SDPA
    try:
        yield
    finally:
        config._attn_implementation = "sdpa"


@functools.cache
def _register_packed_sdpa() -> bool:
    try:
        from transformers import AttentionInterface
        from transformers.integrations.sdpa_attention import sdpa_attention_forward
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
    except ImportError:
        return False
    import torch

    def packed_sdpa(
        module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any
    ):
        if attention_mask is None and query.shape[2] == 1:
            attention_mask = torch.ones(
                (1, 1, 1, key.shape[2]), dtype=torch.bool, device=key.device
            )
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)

    AttentionInterface.register(_PACKED_SDPA, packed_sdpa)
    AttentionMaskInterface.register(_PACKED_SDPA, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])
    return True


def plain_causal_attention(model: CausalLM) -> bool:
    """Whether every layer of a decoder-only model attends to all earlier tokens.

    No sliding window and no other kind of layer: the model then keeps one plain (key,
    value) pair per layer, as a prefix cache needs, and a custom attention mask built
    from the causal one computes what the model's own masks would.
    """
    config = getattr(model, "config", None)
    if config is None or getattr(config, "is_encoder_decoder", False):
        return False
    layer_types = getattr(config, "layer_types", None)
    if layer_types is not None:
        return all(kind == "full_attention" for kind in layer_types)
    return not getattr(config, "sliding_window", None) or not getattr(
        config, "use_sliding_window", True
    )


_SEGMENT_TOKENS = 8
"""Tokens per ``generate`` call while several rows of a chunk are still generating."""


def _generate_chunk(
    model: CausalLM,
    rows: list[Any],
    found: list[tuple[_Entry | None, int]],
    pad_id: int,
    device: Any,
    settings: dict[str, Any],
    max_new_tokens: int,
    cache: PrefixCache | None,
    *,
    plain: bool,
) -> list[list[int]]:
    """Generate for one chunk of prompts; return each one's new tokens (through its eos).

    Rows are left-padded to one width. With reusable states (``found``), the first
    positions come from the cache: if ``S`` is the most tokens any row must compute, row
    ``r`` of ``T`` tokens takes its first ``T - S`` states from its kept sequence (it
    has at least that many) and computes the rest together with the other rows.
    Positions come from the attention mask, so the padding between a row's kept states
    and its computed tokens changes nothing.

    While more than one row is generating, ``generate`` runs ``_SEGMENT_TOKENS`` tokens
    at a time and the rows that have ended leave the batch: otherwise every finished
    reply would be computed on (as padding) until the longest one ends. Each call
    continues from the previous one's states, so this costs a call's setup and one copy
    of the states per segment. With ``cache``, every row's prompt and reply are kept.
    Models whose cache is not ``plain`` (see :func:`plain_causal_attention`) keep
    transformers' own cache and generate each chunk in one call.
    """
    import torch

    input_ids, attention_mask = left_pad([row.tolist() for row in rows], pad_id, device)
    # Room for the whole reply after the prompt: no regrowth on the way.
    past = _new_cache(max_new_tokens) if plain else None
    if cache is not None:
        compute = max(len(row) - reused for row, (_, reused) in zip(rows, found))
        if input_ids.shape[1] > compute:
            past = _batch_cache(
                rows, found, input_ids.shape[1] - compute, device, compute + max_new_tokens
            )
    stop = set(settings["eos_token_id"])
    new: list[list[int]] = [[] for _ in rows]
    active = list(range(len(rows)))  # chunk row of each batch row
    left = max_new_tokens
    while True:
        steps = left if len(active) == 1 or not plain else min(left, _SEGMENT_TOKENS)
        out = model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            max_new_tokens=steps,
            return_dict_in_generate=True,
            **cache_arguments(past),
            **settings,
        )
        width = input_ids.shape[1]
        generated = out.sequences[:, width:].tolist()
        left -= len(generated[0])
        going = []
        for j, tokens in enumerate(generated):
            end = next((k + 1 for k, token in enumerate(tokens) if token in stop), None)
            new[active[j]] += tokens[:end]
            if end is None and left > 0:
                going.append(j)
        if cache is None and not going:
            return new
        states = _layer_states(output_cache(out))  # all positions but the last token's
        if cache is not None:
            padding = (attention_mask == 0).sum(dim=1).tolist()  # rows are left-padded
            for j in sorted(set(range(len(active))) - set(going)):
                r = active[j]
                _keep_row(cache, rows[r], new[r], states, j, padding[j])
        if not going:
            return new
        attention_mask = torch.cat(
            [attention_mask, attention_mask.new_ones((len(active), len(generated[0])))], dim=1
        )
        input_ids, past = out.sequences, output_cache(out)
        if len(going) < len(active):
            # The unfinished rows go on alone, without the padding columns only others needed.
            attention_mask = attention_mask[going]
            trim = int((attention_mask == 0).sum(dim=1).min())
            attention_mask = attention_mask[:, trim:]
            input_ids = input_ids[going, trim:]
            past = _cache_from_states(
                [(k[going, :, trim:], v[going, :, trim:]) for k, v in states], left
            )
            active = [active[j] for j in going]


def _share_prefix(
    model: CausalLM,
    cache: PrefixCache,
    rows: list[Any],
    pad_id: int,
    device: Any,
    settings: dict[str, Any],
) -> int:
    """Compute once, and keep, what several of a chunk's rows share but the cache lacks.

    Two kinds of sharing: the prefix common to all rows (the first turns of new
    conversations share the system prompt), and a prompt repeated in several rows (``n``
    samples of one prompt), kept whole but for its last token. Without this, each row
    would compute them again. They are computed in one batch.

    Returns:
        How many tokens it computed.

    """
    if len(rows) < 2:
        return 0
    shared = []
    keys = [row.tobytes() for row in rows]
    counts = collections.Counter(keys)
    for row, key in zip(rows, keys):  # a repeated prompt, once
        repeated = counts.pop(key, 0) > 1
        if repeated and len(row) - 1 - _reusable(cache, row)[1] >= _MIN_SHARED_PREFIX:
            shared.append(row[:-1])
    common = min(len(row) for row in rows) - 1  # every row computes at least one token
    for row in rows[1:]:
        differ = np.flatnonzero(rows[0][:common] != row[:common])
        common = int(differ[0]) if differ.size else common
    missing = common - max(_reusable(cache, row)[1] for row in rows)
    # A shared prompt at least as long as the common prefix holds it already.
    if missing >= _MIN_SHARED_PREFIX and all(len(prefix) < common for prefix in shared):
        shared.append(rows[0][:common])
    if not shared:
        return 0
    # Greedy and one token: the prefill alone, leaving the sampling random state as it is.
    greedy = {**settings, "logits_processor": None}
    input_ids, attention_mask = left_pad([prefix.tolist() for prefix in shared], pad_id, device)
    out = model.generate(
        input_ids=input_ids,
        attention_mask=attention_mask,
        max_new_tokens=1,
        return_dict_in_generate=True,
        **greedy,
    )
    states = _layer_states(output_cache(out))
    padding = (attention_mask == 0).sum(dim=1).tolist()
    for j, prefix in enumerate(shared):
        _keep_row(cache, prefix, [], states, j, padding[j])
    return sum(len(prefix) for prefix in shared)


_MIN_SHARED_PREFIX = 16
"""Fewest tokens several prompts must share (beyond what is kept) to compute them once."""


def _batch_cache(
    rows: list[Any], found: list[tuple[_Entry | None, int]], cached: int, device: Any, room: int
) -> Any:
    """Build the cache of the first ``cached`` positions of the left-padded rows."""
    import torch

    entry = next(e for e, _ in found if e is not None)
    layers, _, heads, _, head_dim = entry.states.shape
    states = torch.zeros(
        (layers, 2, len(rows), heads, cached, head_dim), dtype=entry.states.dtype, device=device
    )
    width = cached + max(len(row) - reused for row, (_, reused) in zip(rows, found))
    for r, (row, (entry, _)) in enumerate(zip(rows, found)):
        take = len(row) - (width - cached)  # this row's tokens inside the cached positions
        if take > 0:
            states[:, :, r, :, cached - take :] = entry.states[:, :, :, :take]
    return _cache_from_states(
        [(states[layer, 0], states[layer, 1]) for layer in range(layers)], room
    )


def _cache_from_states(states: list[tuple[Any, Any]], room: int) -> Any:
    """Wrap per-layer (key, value) tensors ``[batch, heads, positions, dim]`` as a cache."""
    cache = _new_cache(room)
    for layer, (keys, values) in enumerate(states):
        cache.update(keys, values, layer)
    return cache


def _new_cache(room: int) -> Any:
    """Return an empty ``DynamicCache`` whose layers keep room for ``room`` more positions.

    transformers' own layers concatenate the whole cache with each new token: at 16
    rows of ~400 tokens that copying took 60% of a rollout's time on the CPU. Where
    the cache is made of layer objects (transformers >= 4.56) ours write into spare
    room instead; elsewhere the cache is the stock one.
    """
    from transformers import DynamicCache

    cache = DynamicCache()
    roomy = _roomy_layer_class()
    if roomy is not None and getattr(cache, "layer_class_to_replicate", None) is roomy.__base__:
        cache.layer_class_to_replicate = functools.partial(roomy, room)
    return cache


@functools.cache
def _roomy_layer_class() -> type | None:
    try:
        from transformers.cache_utils import DynamicLayer
    except ImportError:
        return None

    class RoomyLayer(DynamicLayer):
        """A ``DynamicLayer`` that appends into preallocated room (grown when full)."""

        def __init__(self, room: int, **kwargs: Any):
            super().__init__(**kwargs)
            self._room = max(int(room), 1)
            self._buffers: tuple[Any, Any] | None = None
            self._view: Any = None

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any):
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            used = self.keys.shape[-2] if self.keys.numel() else 0
            needed = used + key_states.shape[-2]
            # Rebuilt when full, or when something else replaced the keys (crop, reorder).
            if self._buffers is None or self.keys is not self._view or needed > self._capacity:
                capacity = needed + max(self._room, needed // 4)
                shape = (*key_states.shape[:2], capacity, key_states.shape[-1])
                keys = key_states.new_empty(shape)
                values = value_states.new_empty((*shape[:3], value_states.shape[-1]))
                if used:
                    keys[:, :, :used] = self.keys
                    values[:, :, :used] = self.values
                self._buffers, self._capacity = (keys, values), capacity
            keys, values = self._buffers
            keys[:, :, used:needed] = key_states
            values[:, :, used:needed] = value_states
            self.keys, self.values = keys[:, :, :needed], values[:, :, :needed]
            self._view = self.keys
            return self.keys, self.values

    return RoomyLayer


@functools.cache
def _cache_keyword() -> str:
    """Return the name of the key/value cache in ``generate``, a forward and their outputs.

    ``cache`` where transformers has it (5.x: ``past_key_values`` still works there but
    warns that it goes in 6.0), else ``past_key_values``.
    """
    import dataclasses

    from transformers.generation.utils import GenerateDecoderOnlyOutput

    fields = {field.name for field in dataclasses.fields(GenerateDecoderOnlyOutput)}
    return "cache" if "cache" in fields else "past_key_values"


def cache_arguments(cache: Any) -> dict[str, Any]:
    """Return the keyword arguments that hand a key/value cache to ``generate`` or a forward.

    ``{"cache": cache}`` (transformers' current name; ``past_key_values`` on versions
    before it), and none for ``None``.
    """
    return {} if cache is None else {_cache_keyword(): cache}


def output_cache(output: Any) -> Any:
    """Return the key/value cache a forward or ``generate`` returned (``None`` if none)."""
    return getattr(output, _cache_keyword(), None)


def _layer_states(cache: Any) -> list[tuple[Any, Any]]:
    """Return the (key, value) tensors of each layer of a transformers cache (any version)."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache))


def _keep_row(
    cache: PrefixCache,
    prompt: Any,
    reply: list[int],
    states: list[tuple[Any, Any]],
    row: int,
    begin: int,
) -> None:
    """Keep a batch row's prompt and reply, as far as states exist, in the prefix cache.

    The row's tokens start at column ``begin`` of the batch (after its left padding);
    the states cover every column but the last.
    """
    import torch

    tokens = np.concatenate([prompt, np.asarray(reply, dtype=np.int64)])
    count = min(len(tokens), states[0][0].shape[2] - begin)
    kept = torch.stack(
        [
            torch.stack((k[row, :, begin : begin + count], v[row, :, begin : begin + count]))
            for k, v in states
        ]
    )
    cache._add(tokens[:count], kept)


def stop_token_ids(model: CausalLM, tokenizer: Tokenizer) -> list[int]:
    """Return the token ids that end a reply: the tokenizer's end of sequence and the model's.

    Chat models often stop on an end-of-turn token listed only in ``generation_config``.
    """
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = list(configured) if isinstance(configured, (list, tuple)) else [configured]
    ids.append(tokenizer.eos_token_id)
    return sorted({i for i in ids if i is not None})


def padding_token_id(tokenizer: Tokenizer) -> int:
    """Return the token that left-pads a batch: the tokenizer's pad token, else its eos."""
    pad = tokenizer.pad_token_id
    return pad if pad is not None else tokenizer.eos_token_id


def left_pad(rows: list[list[int]], pad_id: int, device: Any) -> tuple[Any, Any]:
    """Return ``(input_ids, attention_mask)`` of token rows padded on the left, on ``device``."""
    import torch

    width = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, tokens in enumerate(rows):
        if tokens:
            input_ids[row, width - len(tokens) :] = torch.tensor(tokens, dtype=torch.long)
            attention_mask[row, width - len(tokens) :] = 1
    return input_ids.to(device), attention_mask.to(device)
