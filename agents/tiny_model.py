"""A tiny random-init causal LM and tokenizer: no hub, no files, well under a second.

:func:`make_tiny_lm` returns a ``LlamaForCausalLM`` (hidden size 16, 2 layers, 2 heads)
and a fast byte-level BPE tokenizer trained in memory on a small built-in corpus. The
byte-level alphabet means *any* text round-trips through ``encode``/``decode``. The
tokenizer carries a ChatML chat template (the format of SmolLM2, the default model) and
the special tokens ``<|im_start|>`` and ``<|im_end|>``; ``<|im_end|>`` is both the end of
sequence and the padding token, and padding is on the left (for batched generation).

The model's output is garbage, but it is deterministic for a given seed, has a small
vocabulary (so a training step is fast) and exercises every code path a real chat model
does: chat templating, left padding, sampling, log-probs, gradients.

Example::

    model, tokenizer = make_tiny_lm(seed=0)
    agent = TransformersAgent(model, tokenizer, max_new_tokens=8)
"""

from __future__ import annotations

import functools

from sweetrl_gym.lm import CausalLM, Tokenizer

__all__ = [
    "CHATML_TEMPLATE",
    "SPECIAL_TOKENS",
    "TINY_VOCAB_SIZE",
    "make_tiny_lm",
    "make_tiny_tokenizer",
]

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
"""Special tokens; ids 0, 1 and 2 in this order."""

TINY_VOCAB_SIZE = 512
"""Target vocabulary size: 3 special tokens, 256 bytes and merges up to this size."""

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
"""ChatML, as SmolLM2 uses it (without SmolLM2's default system message)."""

_CORPUS = """\
You are a programming assistant working with a human user who wants a Python function.
Ask short clarification questions about the function's name and parameters, the rules,
the thresholds, edge cases and the return format. When you are ready, reply with
I WANT TO ANSWER: followed by the raw Python code of the function.
def compute_total(prices, discount=0.1):
    total = sum(prices)
    if total > 100:
        return round(total * (1 - discount), 2)
    return total
What should the function be called and what parameters does it take?
The function should be called `grade` and take `(score, bonus)` in that order.
If the list is empty, return None. Sort descending by the value. I don't know.
Round the result to 2 decimal places. It should return a dictionary.
"""


@functools.lru_cache(maxsize=1)
def _tokenizer_json() -> str:
    # Training takes a few milliseconds; caching the serialised result keeps every
    # tokenizer independent (a fresh object each call) at no cost.
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=TINY_VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS.splitlines(), trainer=trainer)
    return tok.to_str()


def make_tiny_tokenizer() -> Tokenizer:
    """Return a fresh fast byte-level BPE tokenizer with a ChatML chat template.

    Returns:
        A ``PreTrainedTokenizerFast`` with ``eos_token = pad_token = "<|im_end|>"``,
        ``bos_token = "<|im_start|>"`` and ``padding_side = "left"``.

    """
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_tokenizer_json()),
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|im_end|>",
        unk_token="<|endoftext|>",
        padding_side="left",
    )
    tokenizer.chat_template = CHATML_TEMPLATE
    tokenizer.name_or_path = "tiny-lm"
    return tokenizer


def make_tiny_lm(seed: int = 0, *, tie_word_embeddings: bool = False) -> tuple[CausalLM, Tokenizer]:
    """Build a random-init tiny Llama and its tokenizer.

    Args:
        seed: Seeds the weight initialisation: the same seed gives the same weights.
        tie_word_embeddings: Share one matrix between the input embeddings and the output
            head, as SmolLM2 (the default model) does.

    Returns:
        ``(model, tokenizer)``: a ``LlamaForCausalLM`` in eval mode (hidden size 16,
        2 layers, 2 attention heads, vocabulary of the tokenizer's size, fp32, CPU) and
        the tokenizer of :func:`make_tiny_tokenizer`.

    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = make_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=tie_word_embeddings,
        # Wider than the usual 0.02: replies then depend visibly on the prompt, which
        # tests of ordering and padding need.
        initializer_range=0.2,
    )
    # fork_rng: seeding must not disturb the caller's global random state.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.config.name_or_path = f"tiny-lm-seed{seed}"
    model.name_or_path = model.config.name_or_path
    model.eval()
    return model, tokenizer
