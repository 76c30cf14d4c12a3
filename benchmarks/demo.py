"""The CPU demo (`make demo`): scripted agents play ColBench-Backend-v0 end to end.

Reads top to bottom: make the environment on the bundled test split -> play a few
episodes with the privileged oracle (asks about every hidden fact, then answers with the
reference) and with an agent that answers at once -> print the dialogues and scores ->
score both on more tasks. Everything runs offline on a CPU in well under a minute.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym

import sweetrl_gym  # noqa: F401  (registers the environments)
from agents import ImmediateAnswerAgent, OracleAgent


def play(env: gym.Env, agent, task_index: int) -> tuple[float, dict]:
    """Play one episode; return the final reward and info."""
    _, info = env.reset(options={"task_index": task_index})
    while True:
        if getattr(agent, "privileged", False):
            action = agent.act([info["messages"]], [info["reference"]])[0]
        else:
            action = agent.act([info["messages"]])[0]
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return reward, info


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", type=int, default=2, help="episodes to print per agent")
    parser.add_argument("--score", type=int, default=100, help="test tasks to score per agent")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    env = gym.make("ColBench-Backend-v0", split="test", render_mode="ansi")
    agents = {"oracle (privileged)": OracleAgent(), "answer-immediately": ImmediateAnswerAgent()}

    for name, agent in agents.items():
        for index in range(args.show):
            reward, info = play(env, agent, index)
            print(f"=== {name} on {info['task_id']} (difficulty {env.unwrapped.task.difficulty})")
            print(env.render())
            print(
                f"--> reward {reward:.2f}: {info['tests_passed']}/{info['tests_total']} tests, "
                f"success={info['success']}, {info['turn']} turns\n"
            )

    print(f"=== scores on the first {args.score} test tasks")
    for name, agent in agents.items():
        results = [play(env, agent, i) for i in range(args.score)]
        success = sum(info["success"] for _, info in results) / len(results)
        passed = sum(reward for reward, _ in results) / len(results)
        turns = sum(info["turn"] for _, info in results) / len(results)
        print(f"{name:22s} success {success:6.1%}  tests passed {passed:6.1%}  turns {turns:.1f}")
    print(f"(done in {time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
