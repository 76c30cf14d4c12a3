"""Fixtures for the agent tests: a one-task Frontend environment on a shared browser."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def bakery_page_env() -> Any:
    """``env_kwargs`` of a one-task, one-turn Frontend environment (a browser per module)."""
    from sweetrl_gym.render import Renderer

    page = '<html><head></head><body><h1 class="text-3xl">Bakery</h1></body></html>'
    task = {"problem_description": "I need a page for my bakery.", "ground_truth": page}
    with Renderer(timeout_s=2.0, pages=2) as renderer:
        yield {"tasks": [task], "renderer": renderer, "max_turns": 1}
