import warnings

import pytest
import torch

from algorithms.models import ValueHeadModel, enable_activation_checkpointing, encode_texts
from tests.tiny_lm import make_tiny_lm, make_tiny_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return make_tiny_tokenizer()


def _ids(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_encode_texts_cuts_a_long_text_in_the_middle(tokenizer):
    """A critic state over max_length keeps its hint (start) and its latest turn (end)."""
    long_text = "HINT: the answer is 42. " + "filler words " * 50 + "LATEST: what rate?"
    short_text = "Hi there"
    ids = _ids(tokenizer, long_text)
    assert len(ids) > 40
    input_ids, attention_mask = encode_texts(tokenizer, [long_text, short_text], max_length=40)
    assert input_ids.shape == (2, 40) and attention_mask[0].sum() == 40
    row = input_ids[0].tolist()
    assert row[:20] == ids[:20] and row[20:] == ids[-20:]
    assert tokenizer.decode(row[:20]).startswith("HINT")
    assert tokenizer.decode(row[20:]).endswith("LATEST: what rate?")
    # A text that fits is unchanged (right-padded).
    short = _ids(tokenizer, short_text)
    assert input_ids[1, : len(short)].tolist() == short
    assert attention_mask[1].tolist() == [1] * len(short) + [0] * (40 - len(short))


def test_encode_texts_rejects_nothing_to_encode(tokenizer):
    with pytest.raises(ValueError, match="no texts"):
        encode_texts(tokenizer, [], max_length=8)
    with pytest.raises(ValueError, match="empty"):
        encode_texts(tokenizer, [""], max_length=8)


def _checkpointing(model):
    on = getattr(model, "is_activation_checkpointing", None)  # transformers 5's name
    return model.is_gradient_checkpointing if on is None else on


@pytest.mark.parametrize("wrapped", [False, True])
def test_activation_checkpointing_turns_on_without_a_deprecated_name(wrapped):
    lm, _ = make_tiny_lm()
    model = ValueHeadModel(lm) if wrapped else lm
    assert not _checkpointing(lm)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the old name warns in transformers 5
        enable_activation_checkpointing(model)
    assert _checkpointing(lm)


def test_a_fresh_value_head_starts_near_zero_with_its_heads_apart():
    """Rewards lie in [0, 1]: values of +-2 at the start are what TD targets then chase."""
    lm, tokenizer = make_tiny_lm(seed=0)
    lm.model.norm.weight.data.fill_(12.5)  # last hidden states of an LM's norm (~50)
    critic = ValueHeadModel(lm, num_heads=3)
    ids, mask = encode_texts(tokenizer, ["hello there", "a longer text to read"], max_length=64)
    with torch.no_grad():
        values = critic(ids, mask)
    assert values.abs().max() < 0.5  # the usual hidden**-0.5 scale gives ~+-12 here
    assert not torch.equal(values[:, 0], values[:, 1])  # double Q: two heads, not one
