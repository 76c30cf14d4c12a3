"""Answers written from a backend task's request alone, as an agent that asks nothing would.

A task is only worth asking about if such a guess fails its hidden tests: the task-quality
analysis measures how often it does, and the sandbox benchmark scores it as the candidate
that fails.
"""

from __future__ import annotations

import random

from sweetrl_gym.tasks.families import family_named
from sweetrl_gym.tasks.family import Signature
from sweetrl_gym.tasks.types import BackendTask

__all__ = ["guess_answer"]


def guess_answer(task: BackendTask, rng: random.Random | None = None) -> str:
    """Return the function written from the request alone, with the request's signature if any.

    Args:
        task: A bundled backend task (of a generated family).
        rng: ``None``: every hidden detail at the family's default (the conventional
            guess); else every detail, and the signature the request does not state,
            drawn from the options at random.

    Returns:
        Python source of one function.

    Raises:
        KeyError: If the task has no generated family.

    """
    family = family_named(task.family)
    signatures = family.signature_options()
    if rng is None:
        values = {fact.key: fact.default for fact in family.facts}
        fallback = signatures[0]
    else:
        values = {fact.key: rng.choice(fact.options) for fact in family.facts}
        fallback = rng.choice(signatures)
    return family.render(values, Signature.find_in(task.problem_description) or fallback)
