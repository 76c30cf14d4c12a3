"""ArCHer critic training speed: sampled actions read as branches vs as plain rows.

Reads top to bottom: build deterministic ColBench-like trajectories (``--trajectories``
dialogues of ``--turns`` agent turns, about ``--tokens`` tokens each) and fixed sampled
actions for every turn (``--samples`` per turn, questions and code answers of different
lengths; the policy's sampling is replaced by them, so both sides train on the same
samples and no generation is timed) -> train ArCHer's critic on them twice, from the
same critic start, alternating the order over ``--repeats`` rounds:

* ours: the target reads each turn's sampled actions as branches of the dialogue's row
  (:class:`algorithms.batches.BranchedValueActions`), one no-gradient pass per batch;
* plain rows: the fallback for critics whose attention takes no branch mask, a row per
  (state, sampled action): the state read again for every sample, ``samples`` extra
  passes per batch.

-> report each side's critic steps/s (the best round), the target's input tokens per
fit, and the logged critic losses of both (the same computation: they must agree).

    python -m benchmarks.speed.critic_speed --model default --trajectories 8 --turns 4 \
        --tokens 1500 --samples 2
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from benchmarks.speed.output import (
    DEFAULT_DIR,
    local_model_summary,
    run_from_command_line,
    write_result,
)
from benchmarks.speed.synthetic import (
    FUNCTION_NAMES,
    MODELS,
    chats,
    code_answer,
    grow_dialogue,
    load_model,
    question,
)

__all__ = ["MODELS", "SIDES", "main", "make_trajectories", "run"]

_RESULTS = DEFAULT_DIR / "critic_speed.json"
SIDES = ("branches", "plain-rows")
"""Sampled actions read as branches of the dialogue's row (ours), or as rows of their own."""
TOLERANCE = 1e-3
"""Largest difference of the two sides' logged critic losses (fp32 in other shapes)."""


def make_trajectories(agent: Any, count: int, turns: int, tokens: int, seed: int = 0) -> list:
    """Return ``count`` trajectories of ``turns`` turns, each about ``tokens`` tokens long.

    The human's messages grow a sentence at a time until the last turn's prompt and
    action reach ``tokens`` (with ``agent``'s chat template and system prompt); the
    agent asks ``turns - 1`` questions, then answers with code that succeeds on
    every other trajectory.
    """
    from sweetrl_gym.trajectory import Trajectory, Turn

    rng = random.Random(seed)
    trajectories = []
    for index in range(count):
        users, actions = grow_dialogue(agent, turns, tokens, rng)
        reward = float(index % 2 == 0)
        turn_chats = chats(users, actions)
        steps = [
            Turn(messages=chat, action=action, reward=reward if last else 0.0, done=last)
            for chat, action, last in zip(
                turn_chats, actions, [t == turns - 1 for t in range(turns)]
            )
        ]
        trajectories.append(
            Trajectory(
                task_id=f"bench-{index}",
                turns=steps,
                messages=[*turn_chats[-1], {"role": "assistant", "content": actions[-1]}],
                reward=reward,
                success=reward == 1.0,
                answer=actions[-1],
            )
        )
    return trajectories


def _sampled_actions(prompts: list[str], samples: int, seed: int) -> dict[str, list[str]]:
    """Return fixed samples per prompt: alternately a question and a code answer."""
    rng = random.Random(seed)
    return {
        prompt: [
            question(rng) if (i + k) % 2 else code_answer(rng, rng.choice(FUNCTION_NAMES))
            for k in range(samples)
        ]
        for i, prompt in enumerate(prompts)
    }


def _fit(side: str, policy: Any, buffer: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """Train one side's critic from the critic start; return its time, losses and tokens."""
    import torch

    import algorithms.archer
    from algorithms import ArCHer
    from algorithms.batches import CriticBatch

    supported = algorithms.archer.branch_rows_supported
    if side == "plain-rows":  # the library's own fallback, as for flash attention
        algorithms.archer.branch_rows_supported = lambda model: False
    read_tokens = [0]
    original = CriticBatch.read_with_value_actions

    def counting(batch: CriticBatch, model: Any) -> Any:
        if batch.branched is not None:
            read_tokens[0] += int((batch.branched.branch >= 0).sum())
        else:
            rows = (batch.tokens, *batch.value_actions)
            read_tokens[0] += sum(int(t.attention_mask.sum()) for t in rows)
        return original(batch, model)

    CriticBatch.read_with_value_actions = counting
    try:
        archer = ArCHer(
            policy,
            critic_epochs=1,
            critic_batch_size=settings["batch_size"],
            value_samples=settings["samples"],
            max_length=settings["max_length"],
            gradient_checkpointing=settings["gradient_checkpointing"],
            progress=False,
            seed=0,
        )
        torch.manual_seed(0)
        start = time.perf_counter()
        archer.fit_critic(buffer)
        seconds = time.perf_counter() - start
    finally:
        algorithms.archer.branch_rows_supported = supported
        CriticBatch.read_with_value_actions = original
    losses = [value for _, name, value in archer.history if name == "critic/loss"]
    return {
        "seconds": round(seconds, 3),
        "steps": len(losses),
        "steps_per_s": round(len(losses) / seconds, 4),
        "target_tokens": read_tokens[0],
        "critic_losses": losses,
    }


def run(
    *,
    model: str = "default",
    trajectories: int = 8,
    turns: int = 4,
    tokens: int = 1500,
    samples: int = 2,
    batch_size: int = 4,
    max_length: int = 4096,
    gradient_checkpointing: bool = False,
    repeats: int = 2,
    seed: int = 0,
    out: Path | None = _RESULTS,
) -> dict[str, Any]:
    """Train ArCHer's critic with branched and with plain-row sampled actions; compare.

    Args:
        model: ``"default"`` (SmolLM2-135M, embedded) or ``"tiny"`` (random init).
        trajectories: Dialogues in the buffer.
        turns: Agent turns per dialogue.
        tokens: About how many tokens each dialogue has.
        samples: Sampled actions per turn (ArCHer's ``value_samples``).
        batch_size: Trajectories per critic step (``critic_batch_size``).
        max_length: ArCHer's ``max_length``.
        gradient_checkpointing: Train the critic with activation checkpointing.
        repeats: Rounds, each side once a round (the order alternates); the best counts.
        seed: Seeds the texts.
        out: Also write the result to this JSON file (``None``: nowhere).

    Returns:
        The machine, model and settings; each side's best round (seconds, steps/s,
        target tokens, logged critic losses); the ratio of steps/s (branches / plain
        rows) and of target tokens; the largest difference of the logged losses and
        whether it is within :data:`TOLERANCE`.

    Raises:
        ValueError: If ``model`` is unknown or a count is below 1.
        DefaultModelNotInstalled: If ``model="default"`` and it is not installed.

    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    counts = {"trajectories": trajectories, "turns": turns, "tokens": tokens, "samples": samples}
    counts.update(batch_size=batch_size, max_length=max_length, repeats=repeats)
    if min(counts.values()) < 1:
        raise ValueError(f"every count must be at least 1, got {counts}")
    import torch

    from agents import TransformersAgent
    from algorithms.models import clone_model

    lm, tokenizer = load_model(model)
    probe = TransformersAgent(lm, tokenizer, device="cpu")
    buffer = make_trajectories(probe, trajectories, turns, tokens, seed)
    settings = {**counts, "gradient_checkpointing": gradient_checkpointing}

    def policy() -> Any:
        # A fresh copy a fit: fit_critic trains a critic cloned from it, never ``lm``.
        agent = TransformersAgent(clone_model(lm), tokenizer, device="cpu", seed=0)
        formatted = agent.format_prompts([turn.messages for t in buffer for turn in t.turns])
        canned = _sampled_actions(formatted, samples, seed)

        def generate(batch: list[str], *, n: int = 1, **_: Any) -> list[list[str]]:
            return [canned[prompt][:n] for prompt in batch]

        agent.generate = generate  # the same samples for both sides, no generation timed
        return agent

    best: dict[str, dict[str, Any]] = {}
    for round_index in range(repeats):
        order = SIDES if round_index % 2 == 0 else SIDES[::-1]
        for side in order:
            measured = _fit(side, policy(), buffer, settings)
            if side not in best or measured["seconds"] < best[side]["seconds"]:
                best[side] = measured
    ours, plain = best["branches"], best["plain-rows"]
    difference = max(abs(a - b) for a, b in zip(ours["critic_losses"], plain["critic_losses"]))
    result = {
        **local_model_summary(probe),
        "settings": {**settings, "seed": seed},
        "branches": ours,
        "plain-rows": plain,
        "ratio_steps_per_s": round(ours["steps_per_s"] / plain["steps_per_s"], 3),
        "ratio_target_tokens": round(ours["target_tokens"] / plain["target_tokens"], 3),
        "max_loss_difference": float(f"{difference:.3g}"),
        "losses_agree": difference <= TOLERANCE,
        "torch_threads": torch.get_num_threads(),
    }
    return write_result(result, out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run from the command line (see the module docstring); print the result."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed.critic_speed")
    parser.add_argument("--model", choices=MODELS, default="default")
    parser.add_argument("--trajectories", type=int, default=8)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=1500)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=4096)
    parser.add_argument("--gradient-checkpointing", action="store_true")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=_RESULTS)
    return run_from_command_line(parser, argv, run)


if __name__ == "__main__":
    main()
