"""Rollout throughput: agent turns per second, batched across envs vs one env at a time.

Reads top to bottom: load the embedded default model (SmolLM2-135M-Instruct) as a
greedy agent -> play the same first N test tasks twice in the same run, once with one
environment (the agent generates for one conversation at a time) and once with
``--num-envs`` environments stepped in lockstep (one batched generation per step) ->
report turns/s and generated tokens/s of each and their ratio. Greedy decoding makes
both runs play (nearly) the same dialogues, so the work compared is the same.

    python -m benchmarks.rollout_speed --tasks 16 --num-envs 8
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path
from typing import Any

from agents import collect
from agents.default_model import load_default_agent
from benchmarks.output import emit_result

_RESULTS = Path(__file__).parent / "results" / "rollout_speed.json"


def measure(agent: Any, num_tasks: int, num_envs: int, max_turns: int) -> dict[str, float]:
    """Play the first ``num_tasks`` test tasks with ``num_envs`` envs; return rates."""
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
    tokens = sum(
        len(agent.tokenizer(turn.action, add_special_tokens=False)["input_ids"])
        for _, turn in buffer.turns()
    )
    return {
        "seconds": round(seconds, 2),
        "turns": buffer.num_turns,
        "turns_per_s": round(buffer.num_turns / seconds, 3),
        "tokens_per_s": round(tokens / seconds, 1),
        "mean_reward": round(sum(t.reward for t in buffer) / len(buffer), 4),
    }


def main(argv: list[str] | None = None, agent: Any = None) -> dict[str, Any]:
    """Run the benchmark; ``agent`` overrides the default model (for smoke tests)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--out", type=Path, default=_RESULTS)
    args = parser.parse_args(argv)

    if agent is None:
        agent = load_default_agent(
            temperature=0.0, max_new_tokens=args.max_new_tokens, batch_size=args.num_envs
        )
    agent.act([[{"role": "user", "content": "Hello"}]])  # warm up outside the timing

    sequential = measure(agent, args.tasks, 1, args.max_turns)
    batched = measure(agent, args.tasks, args.num_envs, args.max_turns)

    result = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "model": getattr(agent.model, "name_or_path", type(agent.model).__name__),
        "tasks": args.tasks,
        "max_turns": args.max_turns,
        "max_new_tokens": args.max_new_tokens,
        "one_env_at_a_time": sequential,
        f"batched_{args.num_envs}_envs": batched,
        "speedup_turns_per_s": round(batched["turns_per_s"] / sequential["turns_per_s"], 2),
    }
    return emit_result(result, args.out)


if __name__ == "__main__":
    main()
