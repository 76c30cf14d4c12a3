"""The one model loader: a local folder, a hub id (never fetched here) or the embedded default."""

import pytest
import torch

from agents import default_model, load_causal_lm
from agents.dtypes import dtype_kwargs, torch_dtype
from agents.loading import load_model, load_tokenizer
from tests.tiny_lm import make_tiny_lm

HUB_ID = "sweetrl-gym-tests/some-model"


@pytest.fixture
def tiny_folder(tmp_path):
    model, tokenizer = make_tiny_lm(seed=0)
    model.save_pretrained(str(tmp_path / "tiny"))
    tokenizer.save_pretrained(str(tmp_path / "tiny"))
    return tmp_path / "tiny", model


def test_a_local_folder_loads_with_the_dtype_asked_for(tiny_folder):
    folder, original = tiny_folder
    model, tokenizer = load_causal_lm(folder, dtype="bfloat16")
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    for name, tensor in original.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor.to(torch.bfloat16)), name
    text = "Which name?"
    assert tokenizer(text)["input_ids"] == load_tokenizer(folder)(text)["input_ids"]
    plain = load_model(str(folder))  # from_pretrained's own dtype: the tiny model's fp32
    assert {p.dtype for p in plain.parameters()} == {torch.float32}


def test_a_hub_id_reaches_from_pretrained_unchanged(fake_hub, no_network):
    model, _ = load_causal_lm(HUB_ID, dtype="float16")
    # The tokenizer first; no local_files_only: transformers honours HF_HUB_OFFLINE itself.
    assert fake_hub == [(HUB_ID, {}), (HUB_ID, dtype_kwargs(torch.float16))]
    assert list(dtype_kwargs("float16").values()) == [torch.float16]
    fake_hub.clear()
    assert load_model(HUB_ID) is model and fake_hub == [(HUB_ID, {})]


def test_default_is_the_embedded_model(monkeypatch):
    asked = []

    def load_default_model(**kwargs):
        asked.append(kwargs)
        return "model", "tokenizer"

    monkeypatch.setattr(default_model, "load_default_model", load_default_model)
    assert load_causal_lm("default", dtype="bfloat16") == ("model", "tokenizer")
    assert load_model("default") == "model"
    assert asked == [{"dtype": "bfloat16"}, {"dtype": None}]


def test_a_missing_folder_is_named_and_a_bad_dtype_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"critic_model '\./no-such-model'"):
        load_model("./no-such-model", what="critic_model")
    with pytest.raises(ValueError, match="unknown dtype 'float8'"):
        torch_dtype("float8")
    assert dtype_kwargs(None) == {} and list(dtype_kwargs("auto").values()) == ["auto"]
