"""Fixtures for the algorithm tests: one shared buffer and a fresh tiny policy per test."""

from __future__ import annotations

import pytest

from agents import ImmediateAnswerAgent, OracleAgent, RandomAgent, TransformersAgent, collect
from sweetrl_gym.trajectory import TrajectoryBuffer
from tests.conftest import make_tasks
from tests.tiny_lm import make_tiny_lm

NUM_TASKS = 4


@pytest.fixture(scope="session")
def shared_buffer() -> TrajectoryBuffer:
    """Three episodes per task: an oracle success, a random-questions failure, an immediate failure.

    Every algorithm test trains on this same buffer. Turn limit 10 (the oracle needs
    several questions); ``reference`` carries the ground truth for the critics.
    """
    env_kwargs = {"tasks": make_tasks(NUM_TASKS, seed=3), "max_turns": 10}
    buffers = [
        collect(
            "ColBench-Backend-v0",
            agent,
            NUM_TASKS,
            num_envs=2,
            env_kwargs=env_kwargs,
            progress=False,
        )
        for agent in (OracleAgent(), RandomAgent(seed=0), ImmediateAnswerAgent())
    ]
    buffer = buffers[0] + buffers[1] + buffers[2]
    assert sum(t.success for t in buffer) == NUM_TASKS
    assert all(not t.success for t in buffers[1] + buffers[2])
    return buffer


@pytest.fixture
def tiny_policy() -> TransformersAgent:
    """A fresh random-init tiny policy (training changes it, so one per test)."""
    model, tokenizer = make_tiny_lm(seed=0)
    return TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0)


# Small, fast settings that still exercise every code path (no checkpointing on CPU).
FAST = {
    "learning_rate": 1e-3,
    "batch_size": 2,
    "max_length": 384,
    "gradient_checkpointing": False,
    "progress": False,
}
