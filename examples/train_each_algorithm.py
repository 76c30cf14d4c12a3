"""Train the embedded default model with each algorithm from one shared buffer (CPU, offline).

The training guide's snippets (docs/training.md), as one script. Budget-sized for a
laptop: 6 training tasks, 3 episodes each (an oracle success and two failures, so every
task has pairs), short contexts, a few candidates; each algorithm then plays 4 held-out
test tasks.

    python examples/train_each_algorithm.py --out runs/examples
"""

from __future__ import annotations

import argparse
import time

from agents import (
    ImmediateAnswerAgent,
    OracleAgent,
    RandomAgent,
    collect,
    evaluate,
    load_default_agent,
)
from algorithms import ArCHer, MultiTurnDPO, RejectionFT, SweetRL
from sweetrl_gym import TrajectoryBuffer

# Small budgets for a 2-core CPU; the configs' defaults are the paper's (Llama-3.1-8B).
CPU = {"max_length": 1024, "gradient_checkpointing": False, "batch_size": 2, "learning_rate": 1e-6}
SETTINGS = {
    "rft": (RejectionFT, {}),
    "mt-dpo": (MultiTurnDPO, {"batch_size": 1}),
    "archer": (ArCHer, {"critic_epochs": 1, "critic_learning_rate": 1e-5}),
    "sweet-rl": (
        SweetRL,
        {
            "critic_epochs": 2,
            "critic_learning_rate": 1e-6,
            "num_candidates": 4,
            "candidate_fraction": 0.1,
            "candidate_max_new_tokens": 64,
        },
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/examples")
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--algorithms", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    args = parser.parse_args()

    # One shared buffer: every algorithm learns from the same episodes.
    env_kwargs = {"max_turns": 10}
    buffer = TrajectoryBuffer()
    for agent in (OracleAgent(), RandomAgent(seed=0), ImmediateAnswerAgent()):
        buffer += collect("ColBench-Backend-v0", agent, args.tasks, env_kwargs=env_kwargs, seed=0)
    print(buffer)

    for name in args.algorithms:
        algorithm_class, settings = SETTINGS[name]
        policy = load_default_agent(max_new_tokens=128)  # a fresh copy for each algorithm
        algorithm = algorithm_class(policy, output_dir=f"{args.out}/{name}", **{**CPU, **settings})
        start = time.perf_counter()
        metrics = algorithm.fit(buffer, resume=True)  # resume: a rerun continues, never redoes
        algorithm.save(f"{args.out}/{name}/final")
        scores = evaluate(
            algorithm.policy,
            "ColBench-Backend-v0",
            num_tasks=4,
            num_envs=4,
            env_kwargs={"max_turns": 3},
            progress=False,
        )
        print(
            f"{name}: fit {time.perf_counter() - start:.0f} s; "
            + ", ".join(f"{k}={v:.3f}" for k, v in sorted(metrics.items()))
            + f"; test success {scores['success_rate']:.2f}"
        )


if __name__ == "__main__":
    main()
