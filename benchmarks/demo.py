"""The CPU demo (`make demo`): scripted agents and the embedded default model play ColBench.

Reads top to bottom: show one episode of the privileged oracle (asks about every hidden
fact, then answers with the reference) -> score the scripted agents on the first test
tasks, with 95% confidence intervals -> load the embedded default model
(SmolLM2-135M-Instruct, offline) and show one of its episodes -> score it on a few test
tasks (batched across environments), keeping its episodes in our JSONL format and the
official sweet_rl format. Everything runs offline on a CPU in a few minutes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import sweetrl_gym  # noqa: F401  (registers the environments)
from agents import (
    DEFAULT_MODEL_NAME,
    ImmediateAnswerAgent,
    OracleAgent,
    RandomAgent,
    collect,
    evaluate,
    load_default_agent,
)
from benchmarks.machine import quiet_library_progress_bars, share_cores_politely
from sweetrl_gym import TrajectoryBuffer, format_dialogue

ENV_ID = "ColBench-Backend-v0"


def show(name: str, agent: Any, task_index: int, env_kwargs: dict[str, Any]) -> None:
    """Play one test task and print the dialogue and its score."""
    (episode,) = collect(
        ENV_ID,
        agent,
        task_indices=[task_index],
        split="test",
        env_kwargs=env_kwargs,
        progress=False,
    )
    print(f"=== {name} on {episode.task_id} (difficulty {episode.reference['difficulty']})")
    print(format_dialogue(episode.messages))
    meta = episode.metadata
    print(
        f"--> reward {episode.reward:.2f}: {meta['tests_passed']}/{meta['tests_total']} "
        f"tests, success={episode.success}, {episode.num_turns} turns\n"
    )


def report(name: str, metrics: dict[str, float]) -> None:
    """Print one row of the score table."""
    print(
        f"{name:26s} success {metrics['success_rate']:6.1%} "
        f"[{metrics['success_rate_ci_low']:5.1%}, {metrics['success_rate_ci_high']:5.1%}]  "
        f"tests passed {metrics['tests_passed']:6.1%}  turns {metrics['avg_turns']:.1f}"
    )


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    """Run the demo; returns each agent's metrics."""
    share_cores_politely()  # before the default model loads torch
    quiet_library_progress_bars(downloads=True)  # the GGUF conversion's bar, the loading's
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--score", type=int, default=100, help="test tasks per scripted agent")
    parser.add_argument("--model-tasks", type=int, default=8, help="test tasks for the model")
    parser.add_argument("--model-turns", type=int, default=3, help="turn limit for the model")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--no-model", action="store_true", help="skip the default model")
    parser.add_argument("--cache-dir", type=Path, default=None, help="model cache folder")
    parser.add_argument("--out-dir", type=Path, default=Path("runs/demo"))
    args = parser.parse_args(argv)

    start = time.perf_counter()
    show("oracle (privileged)", OracleAgent(), 0, {})

    results = {}
    print(f"=== scores on the first {args.score} test tasks (95% bootstrap intervals)")
    scripted = {
        "oracle (privileged)": OracleAgent(),
        "random questions": RandomAgent(seed=0),
        "answer-immediately": ImmediateAnswerAgent(),
    }
    for name, agent in scripted.items():
        results[name] = evaluate(agent, ENV_ID, "test", args.score, progress=False)
        report(name, results[name])

    if not args.no_model:
        print(f"\n=== the default model, {DEFAULT_MODEL_NAME}, loading (offline) ...")
        # Greedy: a 135M model sampled at the official temperature 1.0 writes noise.
        model_agent = load_default_agent(
            cache_dir=args.cache_dir, temperature=0.0, max_new_tokens=args.max_new_tokens
        )
        limits = {"max_turns": args.model_turns}
        show(DEFAULT_MODEL_NAME, model_agent, 0, limits)
        out = args.out_dir / "default_model.jsonl"
        out.unlink(missing_ok=True)
        name = f"{DEFAULT_MODEL_NAME} (greedy, {args.model_turns} turns)"
        print(f"=== {name} on the first {args.model_tasks} test tasks, batched")
        results[name] = evaluate(
            model_agent, ENV_ID, "test", args.model_tasks, env_kwargs=limits, out=out
        )
        report(name, results[name])
        official = TrajectoryBuffer.load(out).to_official_jsonl(out.with_suffix(".official.jsonl"))
        print(f"episodes: {out} (ours), {official} (official sweet_rl format)")
    print(f"(done in {time.perf_counter() - start:.1f} s)")
    return results


if __name__ == "__main__":
    main()
