"""Where training runs: a model kept on the CPU trains there, on a machine with a GPU too."""

from __future__ import annotations

import pytest
import torch

from agents import TransformersAgent
from algorithms import ArCHer, RejectionFT
from algorithms.trainer import stays_on_cpu
from sweetrl_gym.lm import model_device
from tests.algorithms.conftest import FAST
from tests.tiny_lm import make_tiny_lm

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")


def test_only_one_process_keeps_a_cpu_model_off_the_gpu(monkeypatch):
    model, _ = make_tiny_lm(seed=0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert stays_on_cpu(model)
    assert not stays_on_cpu(None)
    monkeypatch.setenv("WORLD_SIZE", "2")  # every launched process trains on its own device
    assert not stays_on_cpu(model)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("WORLD_SIZE")
    assert not stays_on_cpu(model)  # no GPU: accelerate's device is the CPU anyway


@needs_gpu
def test_a_cpu_agent_trains_on_the_cpu_and_a_default_agent_on_the_gpu(shared_buffer):
    model, tokenizer = make_tiny_lm(seed=0)
    on_cpu = TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0)
    # ArCHer keeps a target copy of its critic: it too must stay beside the critic.
    ArCHer(on_cpu, **FAST, critic_epochs=1).fit(shared_buffer)
    assert model_device(on_cpu.model).type == "cpu"
    assert on_cpu.act([[{"role": "user", "content": "Write f(x)."}]])  # still generates

    model, tokenizer = make_tiny_lm(seed=0)
    default = TransformersAgent(model, tokenizer, max_new_tokens=8, seed=0)
    assert model_device(default.model).type == "cuda"  # the CPU fit left the default alone
    RejectionFT(default, **FAST).fit(shared_buffer)
    assert model_device(default.model).type == "cuda"
