"""Generation speaks transformers' current cache API: no deprecation warning, same replies."""

import logging
import warnings

import pytest
import torch

from sweetrl_gym.lm import (
    PrefixCache,
    cache_arguments,
    chat_prompt,
    generate_texts,
    output_cache,
)
from tests.tiny_lm import make_tiny_lm

CHATS = [
    [{"role": "user", "content": "What should the function be called?"}],
    [{"role": "user", "content": "Round it."}],
    [{"role": "user", "content": "def f(x): return 1" * 3}],
]


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_lm(seed=0, tie_word_embeddings=True)


@pytest.fixture
def transformers_warnings():
    """Every warning transformers logs (once-only ones included) or raises during the test."""
    from transformers.utils import logging as transformers_logging

    records: list[str] = []

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler = Recorder(level=logging.WARNING)
    root = logging.getLogger("transformers")
    root.addHandler(handler)
    transformers_logging.warning_once.cache_clear()  # shown before: would be skipped now
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield records, caught
    finally:
        root.removeHandler(handler)


def generate(tiny, temperature, cache=None, *, seed=None, batch_size=3):
    model, tokenizer = tiny
    prompts = [chat_prompt(tokenizer, chat, "Be brief.") for chat in CHATS]
    return generate_texts(
        model,
        tokenizer,
        prompts,
        temperature=temperature,
        top_p=0.9,
        max_new_tokens=20,
        batch_size=batch_size,
        seed=seed,
        prefix_cache=cache,
    )


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_generation_with_a_prefix_cache_warns_of_nothing(tiny, transformers_warnings, temperature):
    records, caught = transformers_warnings
    cache = PrefixCache()
    first = generate(tiny, temperature, cache, seed=1)
    again = generate(tiny, temperature, cache, seed=1)  # from the kept states
    assert cache.num_tokens > 0
    if temperature == 0:
        assert first == again == generate(tiny, temperature, batch_size=1)
    else:  # each row's draws depend on the batch's order, which reuse changes
        assert first == generate(tiny, temperature, PrefixCache(), seed=1)
    deprecations = [
        w for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning))
    ]
    assert [str(w.message) for w in deprecations] == []
    assert records == []


def test_a_forward_takes_and_returns_the_cache_by_its_current_name(tiny, transformers_warnings):
    records, caught = transformers_warnings
    model, tokenizer = tiny
    ids = tokenizer("What should the function be called?", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        whole = model(input_ids=ids).logits[:, -1]
        prefix = output_cache(model(input_ids=ids[:, :-1], use_cache=True))
        rest = model(input_ids=ids[:, -1:], **cache_arguments(prefix)).logits[:, -1]
    torch.testing.assert_close(rest, whole)
    assert cache_arguments(None) == {}
    assert [str(w.message) for w in caught if issubclass(w.category, FutureWarning)] == []
    assert records == []
