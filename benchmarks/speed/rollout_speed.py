"""Rollout throughput with a local model: batched vs one env at a time, and vs bare generate.

Reads top to bottom: load the embedded default model (SmolLM2-135M-Instruct) as a
greedy agent -> play the same first N test tasks of ColBench-Backend-v0 in the same
run, once with one environment (one conversation per generation) and once with
``--num-envs`` environments stepped in lockstep (one batched generation per step) ->
replay the batched run's exact prompts through a bare ``model.generate`` (same model,
same settings, chunks of the same batch size, sorted by length) -> report both ratios:

- batched vs sequential: turns/s of the two rollouts (they play the same episodes and
  the same number of turns; greedy decoding makes them nearly the same dialogues);
- rollout vs bare generate: generated tokens per wall second of the whole batched
  rollout (chat templates, environments, simulator, sandboxed tests included) over
  those of ``model.generate`` alone on the same prompts. Tokens are counted the same
  way on both sides: each reply up to and including its end-of-sequence token.

With ``--repeats`` above 1 the three measurements run in turns (interleaved) and each
side's median is reported, so a machine whose load changes affects all sides alike.

    python -m benchmarks.speed.rollout_speed --tasks 16 --num-envs 8
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from agents import collect
from agents.default_model import load_default_agent
from benchmarks.speed.output import (
    DEFAULT_DIR,
    local_model_summary,
    print_result,
    write_result,
)
from sweetrl_gym.lm import left_pad, model_device, padding_token_id, stop_token_ids

_RESULTS = DEFAULT_DIR / "rollout_speed.json"


def rollout(agent: Any, num_tasks: int, num_envs: int, max_turns: int) -> dict[str, Any]:
    """Play the first ``num_tasks`` test tasks with ``num_envs`` envs; return what it cost."""
    before = _counts(agent)
    start = time.perf_counter()
    buffer = collect(
        "ColBench-Backend-v0",
        agent,
        task_indices=range(num_tasks),
        num_envs=num_envs,
        split="test",
        env_kwargs={"max_turns": max_turns},
        progress=False,
    )
    seconds = time.perf_counter() - start
    counts = {key: value - before[key] for key, value in _counts(agent).items()}
    return {
        "seconds": seconds,
        "episodes": len(buffer),
        "turns": buffer.num_turns,
        "prompts": [turn.prompt for _, turn in buffer.turns()],
        "mean_reward": sum(t.reward for t in buffer) / len(buffer),
        **counts,
    }


def bare_generate(agent: Any, prompts: list[str], batch_size: int) -> dict[str, Any]:
    """Time ``model.generate`` alone on ``prompts``: sorted by length, left-padded chunks."""
    import torch

    model, tokenizer = agent.model, agent.tokenizer
    rows = sorted((tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts), key=len)
    pad = padding_token_id(tokenizer)
    eos = stop_token_ids(model, tokenizer)  # the agent's stop tokens: tokens are counted alike
    settings = {"max_new_tokens": agent.max_new_tokens, "do_sample": False, "top_k": None}
    settings.update(temperature=None, top_p=None, pad_token_id=pad, eos_token_id=eos)
    tokens, seconds = 0, 0.0
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        input_ids, attention_mask = left_pad(chunk, pad, model_device(model))
        width = input_ids.shape[1]
        began = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(input_ids=input_ids, attention_mask=attention_mask, **settings)
        seconds += time.perf_counter() - began
        for row in out[:, width:].tolist():  # up to and including the first eos
            tokens += next((i + 1 for i, t in enumerate(row) if t in eos), len(row))
    return {"seconds": seconds, "sequences": len(rows), "generated_tokens": tokens}


def _counts(agent: Any) -> dict[str, float]:
    stats = agent.stats
    return {
        "generated_tokens": stats.generated_tokens,
        "prompt_tokens": stats.prompt_tokens,
        "reused_tokens": stats.reused_tokens,
        "generate_seconds": stats.seconds,
    }


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the median run (by tokens/s), rates added and rounded, the prompts left out."""
    for run in runs:
        run["tokens_per_s"] = run["generated_tokens"] / run["seconds"]
        if "turns" in run:
            run["turns_per_s"] = run["turns"] / run["seconds"]
    ranked = sorted(runs, key=lambda run: run["tokens_per_s"])
    middle = dict(ranked[len(ranked) // 2])
    middle.pop("prompts", None)
    rounded = {k: round(v, 3) if isinstance(v, float) else v for k, v in middle.items()}
    rounded["tokens_per_s_each_repeat"] = [round(run["tokens_per_s"], 1) for run in runs]
    return rounded


def run(
    *,
    tasks: int = 16,
    num_envs: int = 8,
    max_turns: int = 3,
    max_new_tokens: int = 96,
    repeats: int = 1,
    dtype: str | None = None,
    out: Path | None = None,
    agent: Any = None,
) -> dict[str, Any]:
    """Time the rollout batched and one env at a time, and bare generate; return the rates.

    Args:
        tasks: The first N test tasks of ColBench-Backend-v0 to play.
        num_envs: Environments stepped in lockstep in the batched rollout (and the default
            model's generation batch size).
        max_turns: Each episode's turn limit.
        max_new_tokens: The default model's reply limit (an ``agent`` brings its own).
        repeats: Interleaved rounds of the three measurements; each side reports its median.
        dtype: The default model's dtype (``None``: the agent's default).
        out: Also write the result to this JSON file (its folders made as needed).
        agent: A local-model agent (e.g. ``TransformersAgent``) to use instead of the
            default model (for smoke tests); ``max_new_tokens`` and ``dtype`` then do
            nothing.

    Returns:
        The machine, model, dtype and settings; the median run of each side (one env at
        a time, ``batched_<num_envs>_envs``, ``bare_generate``) with its rates; whether
        bare generate replayed all the rollout's prompts; and both ratios.

    Raises:
        ValueError: If a count is below 1.
        DefaultModelNotInstalled: If no ``agent`` is given and the default model is not
            installed.

    """
    if min(tasks, num_envs, max_turns, max_new_tokens, repeats) < 1:
        raise ValueError("tasks, num_envs, max_turns, max_new_tokens, repeats must be >= 1")
    if agent is None:
        settings = {} if dtype is None else {"dtype": dtype}
        agent = load_default_agent(
            temperature=0.0, max_new_tokens=max_new_tokens, batch_size=num_envs, **settings
        )
    # Warm up outside the timing: the model, the task list, an environment, the sandbox
    # (otherwise the side that runs first pays for them).
    rollout(agent, 1, 1, 1)

    sequential, batched, bare = [], [], []
    for _ in range(repeats):
        sequential.append(rollout(agent, tasks, 1, max_turns))
        batched.append(rollout(agent, tasks, num_envs, max_turns))
        bare.append(bare_generate(agent, batched[-1]["prompts"], agent.batch_size))
    same_prompts = all(len(b["prompts"]) == g["sequences"] for b, g in zip(batched, bare))
    sequential, batched, bare = _summary(sequential), _summary(batched), _summary(bare)

    result = {
        **local_model_summary(agent),
        "tasks": tasks,
        "num_envs": num_envs,
        "batch_size": agent.batch_size,
        "max_turns": max_turns,
        "max_new_tokens": max_new_tokens,
        "repeats": repeats,
        "one_env_at_a_time": sequential,
        f"batched_{num_envs}_envs": batched,
        "bare_generate": bare,
        "same_prompts": same_prompts,
        "speedup_turns_per_s": round(batched["turns_per_s"] / sequential["turns_per_s"], 2),
        "rollout_vs_bare_tokens_per_s": round(batched["tokens_per_s"] / bare["tokens_per_s"], 3),
    }
    return write_result(result, out)


def main(argv: list[str] | None = None, agent: Any = None) -> dict[str, Any]:
    """Run the benchmark from the command line; prints, writes and returns the result.

    ``agent`` overrides the default model (for smoke tests), as in :func:`run`.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=1, help="interleaved rounds")
    parser.add_argument("--dtype", default=None, help="model dtype (default: the agent's)")
    parser.add_argument("--out", type=Path, default=_RESULTS, help="default: %(default)s")
    args = parser.parse_args(argv)
    result = run(**vars(args), agent=agent)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
