"""Environment throughput with the offline simulators: many envs at once vs one at a time.

Reads top to bottom: for each environment, a scripted agent that needs no model plays the
same first N bundled test tasks twice in the same run: once with one environment (one
episode at a time) and once with ``--num-envs`` environments (``agents.collect`` steps
them in parallel threads, so simulator replies, sandboxed tests and page renders overlap)
-> report steps/s, episodes/s and mean reward of each mode and the ratio of steps/s. The
agent is deterministic and every episode is planned the same way, so both modes play the
same episodes and must get the same rewards.

- ColBench-Backend-v0: the rule-based simulated human; ``OracleAgent`` asks about every
  hidden fact, then answers with the reference (scored in the sandbox).
- ColBench-Frontend-v0: the visual simulated human; a scripted designer shows two draft
  pages (targets of later test tasks, a different pair per episode) and then answers with the
  target page. Needs the renderer (``python -m sweetrl_gym.render.install``); without it
  this part is skipped with a note.

Each mode gets its own fresh sandbox or renderer (started outside the timing), so neither
reuses what the other cached; environments are made before the clock starts.

    python -m benchmarks.speed.env_speed --tasks 32 --envs backend,frontend
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

import sweetrl_gym  # noqa: F401  (registers the environments)
from agents import OracleAgent, collect
from benchmarks.speed.output import DEFAULT_DIR, run_from_command_line, write_result
from sweetrl_gym.actions import ANSWER_MARKER

__all__ = ["ENVIRONMENTS", "DraftingDesigner", "main", "measure", "renderer_missing", "run"]

_RESULTS = DEFAULT_DIR / "env_speed.json"
ENVIRONMENTS = {"backend": "ColBench-Backend-v0", "frontend": "ColBench-Frontend-v0"}
"""The environments this benchmark can time, by short name."""


class DraftingDesigner:
    """A privileged scripted frontend agent: shows draft pages, then answers with the target.

    Each turn before the last ``len(drafts)`` it sends the next draft page of its episode
    (looked up by the episode's target page), and then answers with the target itself.

    Args:
        drafts_by_target: For each target page (``reference["ground_truth"]``), the draft
            pages to show before answering.

    """

    privileged = True

    def __init__(self, drafts_by_target: Mapping[str, Sequence[str]]):
        self.drafts_by_target = {
            target: list(drafts) for target, drafts in drafts_by_target.items()
        }

    def act(
        self, batch: Sequence[Sequence[Mapping[str, str]]], references: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        """Show the next draft of each conversation, or answer with its target page."""
        replies = []
        for messages, reference in zip(batch, references):
            target = reference["ground_truth"]
            drafts = self.drafts_by_target.get(target, [])
            turn = sum(1 for m in messages if m.get("role") == "assistant")
            if turn < len(drafts):
                replies.append(f"Here is a first version; what should change?\n{drafts[turn]}")
            else:
                replies.append(f"{ANSWER_MARKER}\n{target}")
        return replies


def measure(envs: Sequence[gym.Env], agent: Any, num_tasks: int) -> dict[str, Any]:
    """Play the first ``num_tasks`` tasks on ``envs`` (made beforehand); return the rates."""
    start = time.perf_counter()
    buffer = collect(list(envs), agent, task_indices=range(num_tasks), progress=False)
    seconds = time.perf_counter() - start
    rewards = [trajectory.reward for trajectory in buffer]
    return {
        "envs": len(envs),
        "seconds": round(seconds, 3),
        "episodes": len(buffer),
        "steps": buffer.num_turns,
        "steps_per_s": round(buffer.num_turns / seconds, 2),
        "episodes_per_s": round(len(buffer) / seconds, 3),
        "mean_reward": round(sum(rewards) / len(rewards), 6),
        "success_rate": round(sum(t.success for t in buffer) / len(buffer), 4),
        "_rewards": rewards,
    }


def _compare(
    make_resource: Callable[[], Any],
    make_env: Callable[[Any], gym.Env],
    agent: Any,
    num_tasks: int,
    num_envs: int,
) -> dict[str, Any]:
    """Time one env at a time, then ``num_envs`` at once, each on a fresh resource."""
    modes = {}
    # More envs than episodes would sit idle: make at most one per episode.
    for name, count in (("one_env", 1), ("parallel", min(num_envs, num_tasks))):
        resource = make_resource()  # a warm sandbox or renderer of this mode's own
        envs = [make_env(resource) for _ in range(count)]
        try:
            modes[name] = measure(envs, agent, num_tasks)
        finally:
            for env in envs:
                env.close()
            resource.close()
    one, parallel = modes["one_env"], modes["parallel"]
    same = one.pop("_rewards") == parallel.pop("_rewards")
    return {
        "num_envs": parallel["envs"],
        "one_env": one,
        "parallel": parallel,
        "speedup_steps_per_s": round(parallel["steps_per_s"] / one["steps_per_s"], 3),
        "same_rewards": same,
    }


def _backend(num_tasks: int, num_envs: int, max_turns: int) -> dict[str, Any]:
    from sweetrl_gym.sandbox import Sandbox

    def warm_sandbox() -> Sandbox:
        sandbox = Sandbox()
        sandbox.run_tests("x = 1", "x = 1", ["x"])  # start its workers outside the timing
        return sandbox

    def make_env(sandbox: Sandbox) -> gym.Env:
        return gym.make(ENVIRONMENTS["backend"], split="test", max_turns=max_turns, sandbox=sandbox)

    agent = OracleAgent(max_turns=max_turns)
    result = _compare(warm_sandbox, make_env, agent, num_tasks, num_envs)
    result["agent"] = "OracleAgent: asks about every hidden fact, then answers with the reference"
    result["simulator"] = "RuleBasedSimulator"
    return result


def _frontend(
    num_tasks: int, num_envs: int, max_turns: int, drafts: int, render_pages: int
) -> dict[str, Any]:
    from sweetrl_gym.render import Renderer
    from sweetrl_gym.tasks import load_frontend_tasks

    pages = [task.ground_truth for task in load_frontend_tasks("bundled", split="test")]
    targets, pool = pages[:num_tasks], pages[num_tasks:]
    if len(pool) < drafts * num_tasks:
        most = len(pages) // (drafts + 1)
        raise ValueError(f"{drafts} drafts per task leave pages for at most {most} frontend tasks")
    # Drafts are the targets of later test tasks, a distinct set per episode: no episode
    # reuses another's renders (the renderer caches by page).
    plan = {target: pool[i * drafts : (i + 1) * drafts] for i, target in enumerate(targets)}

    def warm_renderer() -> Renderer:
        renderer = Renderer(pages=render_pages)
        renderer.render("<html><body>warm-up</body></html>")  # start the browser now
        return renderer

    def make_env(renderer: Renderer) -> gym.Env:
        return gym.make(
            ENVIRONMENTS["frontend"], split="test", max_turns=max_turns, renderer=renderer
        )

    agent = DraftingDesigner(plan)
    result = _compare(warm_renderer, make_env, agent, num_tasks, num_envs)
    result["agent"] = (
        f"DraftingDesigner: shows {drafts} draft pages (other tasks' targets), then answers "
        "with the target page"
    )
    result["simulator"] = "VisualDiffSimulator"
    result["render_pages"] = render_pages
    return result


def renderer_missing() -> str | None:
    """Return why the renderer cannot start here (no browser, Tailwind or Playwright), or None."""
    import importlib.util

    from sweetrl_gym.render import (
        AssetMissingError,
        BrowserNotFoundError,
        find_chromium,
        tailwind_path,
    )

    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed: pip install 'sweetrl-gym[frontend]'"
    try:
        find_chromium()
        tailwind_path()
    except (BrowserNotFoundError, AssetMissingError) as err:
        return str(err)
    return None


def run(
    *,
    tasks: int = 32,
    frontend_tasks: int | None = None,
    envs: str | Sequence[str] = "backend,frontend",
    num_envs: int = 8,
    max_turns: int = 10,
    drafts: int = 2,
    render_pages: int = 2,
    out: Path | None = None,
) -> dict[str, Any]:
    """Time each environment one env at a time and ``num_envs`` at once; return the rates.

    Args:
        tasks: The first N bundled test tasks to play (each once per mode).
        frontend_tasks: Tasks for the frontend env (``None``: ``tasks``).
        envs: Which environments to time, by short name (see :data:`ENVIRONMENTS`): a
            sequence, or one comma-separated string.
        num_envs: Environments stepped at once in the parallel mode (at most one per task).
        max_turns: Each episode's turn limit.
        drafts: Frontend: draft pages the scripted designer shows before answering.
        render_pages: Frontend: the renderer's page pool.
        out: Also write the result to this JSON file (its folders made as needed).

    Returns:
        The machine, ``max_turns``, and for each timed environment (by short name) both
        modes' steps/s, episodes/s and mean reward, their ratio and whether both modes
        got the same rewards; ``{"skipped": reason}`` instead for the frontend when the
        renderer is not set up here.

    Raises:
        ValueError: If ``envs`` names an unknown or no environment, a count is below 1,
            ``max_turns`` leaves the frontend no turn to answer after its drafts, or the
            bundled pages are too few for the frontend's drafts.

    """
    names = [name.strip() for name in (envs.split(",") if isinstance(envs, str) else envs)]
    names = [name for name in names if name]
    unknown = [name for name in names if name not in ENVIRONMENTS]
    if unknown or not names:
        raise ValueError(
            f"envs: unknown {unknown or 'empty'}; choose from {', '.join(ENVIRONMENTS)}"
        )
    frontend_tasks = frontend_tasks if frontend_tasks is not None else tasks
    if min(tasks, frontend_tasks, num_envs, max_turns, render_pages) < 1:
        raise ValueError("tasks, frontend_tasks, num_envs, max_turns, render_pages must be >= 1")
    if "frontend" in names and not 0 <= drafts < max_turns:
        raise ValueError(
            f"drafts must be >= 0 and below max_turns ({max_turns}) to leave a turn to answer, "
            f"got {drafts}"
        )

    result: dict[str, Any] = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "max_turns": max_turns,
    }
    if "backend" in names:
        result["backend"] = {"tasks": tasks, **_backend(tasks, num_envs, max_turns)}
    if "frontend" in names:
        missing = renderer_missing()
        if missing is not None:
            result["frontend"] = {"skipped": f"renderer not set up: {missing}"}
        else:
            result["frontend"] = {
                "tasks": frontend_tasks,
                **_frontend(frontend_tasks, num_envs, max_turns, drafts, render_pages),
            }
    return write_result(result, out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark from the command line; prints, writes and returns the result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=32, help="first N bundled test tasks")
    parser.add_argument(
        "--frontend-tasks", type=int, help="tasks for the frontend env (default: --tasks)"
    )
    parser.add_argument(
        "--envs", default="backend,frontend", help="comma-separated: " + ", ".join(ENVIRONMENTS)
    )
    parser.add_argument("--num-envs", type=int, default=8, help="environments in parallel mode")
    parser.add_argument("--max-turns", type=int, default=10)
    parser.add_argument(
        "--drafts", type=int, default=2, help="frontend: pages shown before answering"
    )
    parser.add_argument("--render-pages", type=int, default=2, help="frontend: renderer page pool")
    parser.add_argument("--out", type=Path, default=_RESULTS, help="default: %(default)s")
    return run_from_command_line(parser, argv, run)


if __name__ == "__main__":
    main()
