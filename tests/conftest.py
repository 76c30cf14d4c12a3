"""Shared fixtures: small task sets drawn from the generator, and a sandbox."""

from __future__ import annotations

import random

import pytest

from sweetrl_gym.sandbox import Sandbox
from sweetrl_gym.tasks import BackendTask
from sweetrl_gym.tasks.families import FAMILIES
from sweetrl_gym.tasks.generator import draft_task


def make_tasks(count: int, seed: int = 0) -> list[BackendTask]:
    """Draw ``count`` tasks across families without touching the bundled file."""
    rng = random.Random(seed)
    tasks = []
    i = 0
    while len(tasks) < count:
        draft = draft_task(FAMILIES[i % len(FAMILIES)], rng)
        i += 1
        if draft is not None:
            tasks.append(draft.to_task(f"t{len(tasks)}", "train"))
    return tasks


@pytest.fixture(scope="session")
def small_tasks() -> list[BackendTask]:
    return make_tasks(12)


@pytest.fixture(scope="session")
def sandbox():
    with Sandbox() as box:
        yield box
