"""What the local-model benchmarks time: deterministic ColBench-like text and the models.

Every function here is deterministic in its ``rng`` (or seed): both sides of a benchmark
read the same text, and a rerun reads it again.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sweetrl_gym.lm import CausalLM, Tokenizer

__all__ = [
    "FUNCTION_NAMES",
    "MODELS",
    "chats",
    "code_answer",
    "grow_dialogue",
    "load_model",
    "question",
    "sentence",
]

MODELS = ("tiny", "default")
"""A tiny random-init model, or the default model (SmolLM2-135M, embedded)."""

FUNCTION_NAMES = (
    "shipping_cost late_fee grade_report bonus_points loyalty_discount merge_orders "
    "rank_players parse_log_line"
).split()
_THINGS = (
    "the order total|the weight in kilograms|each late day|the grace period|the bonus|"
    "an empty list|negative amounts|the rounding|the return value|the member level"
).split("|")
_RULES = (
    "is capped at 50 dollars|rounds to two decimals|counts only after the third day|"
    "doubles for premium members|is ignored when zero|applies before the tax|"
    "is returned as a float|raises a ValueError"
).split("|")


def sentence(rng: random.Random) -> str:
    """Return one fact the human states, e.g. ``"The bonus is ignored when zero."``."""
    return f"{rng.choice(_THINGS).capitalize()} {rng.choice(_RULES)}."


def question(rng: random.Random) -> str:
    """Return one clarifying question of the agent."""
    return f"What should happen with {rng.choice(_THINGS)}? Does it {rng.choice(_RULES)}?"


def code_answer(rng: random.Random, name: str) -> str:
    """Return the agent's final answer: a function ``name`` of 3-6 branches, after the marker."""
    body = [f"def {name}(total, weight, days=0, member=False):", "    cost = 0.0"]
    for _ in range(rng.randint(3, 6)):
        body += [
            f"    if days > {rng.randint(1, 9)}:",
            f"        cost += {rng.randint(1, 99)} / 100",
        ]
    return "I WANT TO ANSWER:\n" + "\n".join([*body, "    return round(cost, 2)"])


def chats(users: list[str], actions: list[str]) -> list[list[dict[str, str]]]:
    """Each turn's messages: the human's so far and the agent's earlier replies."""
    built: list[list[dict[str, str]]] = []
    messages: list[dict[str, str]] = []
    for user, action in zip(users, actions):
        messages.append({"role": "user", "content": user})
        built.append(list(messages))
        messages.append({"role": "assistant", "content": action})
    return built


def grow_dialogue(
    agent: Any, turns: int, tokens: int, rng: random.Random
) -> tuple[list[str], list[str]]:
    """Return the human's messages and the agent's actions of a ``turns``-turn dialogue.

    The agent asks ``turns - 1`` questions, then answers with code. The human's messages
    grow a sentence at a time (round robin) until the last turn's prompt (with
    ``agent``'s chat template and system prompt), its action and the end token reach
    ``tokens``.
    """
    name = rng.choice(FUNCTION_NAMES)
    users = [f"I need a Python function `{name}`. {sentence(rng)}"]
    users += [sentence(rng) for _ in range(turns - 1)]
    actions = [question(rng) for _ in range(turns - 1)] + [code_answer(rng, name)]

    def length() -> int:
        prompt = agent.format_prompts([chats(users, actions)[-1]])[0]
        ids = agent.tokenizer([prompt, actions[-1]], add_special_tokens=False)["input_ids"]
        return len(ids[0]) + len(ids[1]) + 1

    grow = 0
    while length() < tokens:
        users[grow % turns] += " " + sentence(rng)
        grow += 1
    return users, actions


def load_model(name: str, device: str = "cpu") -> tuple[CausalLM, Tokenizer]:
    """Return one of :data:`MODELS` on ``device``.

    Raises:
        ValueError: If ``name`` is not one of :data:`MODELS`.
        DefaultModelNotInstalled: If ``name="default"`` and it is not installed.

    """
    if name == "tiny":
        from agents.tiny_model import make_tiny_lm

        model, tokenizer = make_tiny_lm(seed=0)
        return model.to(device), tokenizer
    if name != "default":
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {name!r}")
    from agents import load_default_model

    return load_default_model(device=device)
