"""ColBench-Frontend-v0 end to end, offline: an episode, scores and a win rate.

    python examples/frontend_episode.py --tasks 10

Plays one episode with a scripted designer (it shows a generic draft, reads the
simulated human's feedback, asks about colours, then submits the draft), then scores
three scripted agents on the first test tasks and judges the draft against a blank page.
Needs the renderer set up once: ``python -m sweetrl_gym.render.install``.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym

import sweetrl_gym  # noqa: F401 - registers the environments
from agents import OracleAgent, evaluate
from sweetrl_gym import TrajectoryBuffer, format_dialogue
from sweetrl_gym.judges import SimilarityJudge, win_rate_from_buffers

DRAFT = """<html><head><script src="https://cdn.tailwindcss.com"></script></head><body>
<nav class="bg-white p-4 flex justify-between"><span class="font-bold">Brand</span>
<a href="#">Home</a></nav>
<header class="bg-gray-100 py-24 text-center"><h1 class="text-5xl font-bold">Welcome</h1>
<p class="text-xl mt-4">What we do, in one line.</p></header>
<section class="grid grid-cols-3 gap-8 p-12"><div>One</div><div>Two</div><div>Three</div>
</section>
<footer class="bg-gray-800 text-white p-8 text-center">Contact us</footer></body></html>"""


class DraftAgent:
    """Shows a generic draft, asks about colours, then submits the draft unchanged."""

    def act(self, batch: Sequence[Sequence[dict[str, str]]]) -> list[str]:
        """Reply to every conversation by its turn."""
        return [self._reply(sum(m["role"] == "assistant" for m in chat)) for chat in batch]

    @staticmethod
    def _reply(turn: int) -> str:
        if turn == 0:
            return f"Here is a first draft:\n{DRAFT}\nWhat should change?"
        if turn == 1:
            return "Which colours should the page use?"
        return f"I WANT TO ANSWER:\n{DRAFT}"


class BlankAgent:
    """Submits an empty page at once: the floor."""

    def act(self, batch: Sequence[Sequence[dict[str, str]]]) -> list[str]:
        """Answer every conversation with a blank page."""
        return ["I WANT TO ANSWER: <html><body></body></html>"] * len(batch)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=10, help="test tasks to score on")
    args = parser.parse_args(argv)

    env = gym.make("ColBench-Frontend-v0", split="test")
    _, info = env.reset(seed=0, options={"task_index": 0})
    agent, terminated = DraftAgent(), False
    while not terminated:
        action = agent.act([info["messages"]])[0]
        _, reward, terminated, _, info = env.step(action)
    print(format_dialogue(info["messages"]).replace(DRAFT, "<html>…draft…</html>"))
    print(f"--> similarity {reward:.3f}; target screenshot: {info['reference']['screenshot']}\n")
    env.close()

    out = Path(tempfile.mkdtemp(prefix="frontend-example-"))
    agents = {"oracle (privileged)": OracleAgent(), "draft": DraftAgent(), "blank": BlankAgent()}
    for name, agent in agents.items():
        path = out / f"{name.split()[0]}.jsonl"
        metrics = evaluate(agent, "ColBench-Frontend-v0", num_tasks=args.tasks, out=path)
        low, high = metrics["similarity_ci_low"], metrics["similarity_ci_high"]
        print(f"{name:20s} similarity {metrics['similarity']:.3f} [{low:.3f}, {high:.3f}]")
    result = win_rate_from_buffers(
        SimilarityJudge(),
        TrajectoryBuffer.load(out / "draft.jsonl"),
        TrajectoryBuffer.load(out / "blank.jsonl"),
    )
    print(
        f"draft vs blank: win rate {result['win_rate']:.0%} "
        f"[{result['ci_low']:.0%}, {result['ci_high']:.0%}] over {result['num_tasks']} tasks"
    )


if __name__ == "__main__":
    main()
