"""Stand-ins for the paper's files in their official formats, small enough for a CPU.

The ``paper-mini`` config runs the paper's pipeline (``paper.toml``, every official
setting) on files of the official release's formats: Backend task files
(``backend_tasks/train.jsonl``, ``test.jsonl``), an offline trajectory file in the
official sweet_rl format (best-of-k rows: repeat ``j`` of task ``i`` at row ``n j + i``),
the simulated human's prompt file and the agent's prompt file. The official files cannot
ship here (the data is the release's, the prompts are CC-BY-NC); these are made from the
bundled tasks, with episodes of the scripted collaborator (some succeed, some fail, so
SWEET-RL's critic has pairs) and prompts in our words with the official placeholders.
"""

from __future__ import annotations

import json
from pathlib import Path

from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.official_data import AGENT_PROMPT_FILES, BACKEND_TASK_FILES, HUMAN_PROMPT_FILES
from sweetrl_gym.tasks import BackendTask

__all__ = ["AGENT_PROMPT", "HUMAN_PROMPT", "MINI_FILES", "write_mini_data"]

MINI_FILES = {
    "train_tasks": BACKEND_TASK_FILES["train"],
    "test_tasks": BACKEND_TASK_FILES["test"],
    "trajectories": "colbench_code_offline_mini.jsonl",
    "human_prompt": HUMAN_PROMPT_FILES["backend"],
    "agent_prompt": AGENT_PROMPT_FILES["backend"],
}
"""The files :func:`write_mini_data` writes, by role, relative to its folder (the names of
the official ones, but for the trajectories')."""

HUMAN_PROMPT = """\
You are the user who asked an AI agent for a Python function. Your request was:
{problem_description}

What you want is exactly this function, which the agent cannot see:
{hidden_information}

The conversation so far:
{dialogue_history}

Reply as the user to the agent's last message in at most two sentences, in plain words and
only from the function above; say you don't know when it does not answer the question.
"""
"""The simulated human's prompt in our words, with the official file's placeholders."""

AGENT_PROMPT = """\
You are a helpful agent writing a Python function for a user over at most 10 turns. Ask a
question when a detail of the request is unclear; when you know enough, answer with
I WANT TO ANSWER: followed by the function's code alone.
{dialogue_history}
"""
"""The agent's system prompt in our words; the official one ends with an unfilled
``{dialogue_history}``, kept as it is."""


def write_mini_data(
    directory: str | Path,
    *,
    train_tasks: int = 24,
    test_tasks: int = 16,
    samples_per_task: int = 3,
    ask_probability: float = 0.8,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Path]:
    """Write the official-format stand-ins (:data:`MINI_FILES`) under ``directory``.

    Args:
        directory: Where the files go (created).
        train_tasks: Bundled training tasks in the task file and the trajectory file.
        test_tasks: Bundled test tasks in the test file.
        samples_per_task: Episodes per training task (the published file's 3).
        ask_probability: The scripted collaborator's chance of asking about each detail
            (below 1, some of its episodes fail).
        seed: Seeds the collaborator and the episodes.
        progress: Show a progress bar while the episodes are played.

    Returns:
        Each file's path, by the roles of :data:`MINI_FILES`.

    Raises:
        ValueError: If a count is below 1.

    """
    from agents import ScriptedCollaborator, collect
    from sweetrl_gym.tasks import load_backend_tasks

    if min(train_tasks, test_tasks, samples_per_task) < 1:
        raise ValueError("train_tasks, test_tasks and samples_per_task must be at least 1")
    directory = Path(directory)
    paths = {role: directory / name for role, name in MINI_FILES.items()}
    train = load_backend_tasks("bundled", split="train")[:train_tasks]
    test = load_backend_tasks("bundled", split="test")[:test_tasks]
    _write_lines(paths["train_tasks"], [_official_task(t) for t in train])
    _write_lines(paths["test_tasks"], [_official_task(t) for t in test])
    # Repeat j of task i at row n j + i, as the published best-of-k file: pass j plays every
    # task once with a collaborator of its own seed (one seed would repeat its choices).
    episodes = [
        collect(
            "ColBench-Backend-v0",
            ScriptedCollaborator(ask_probability=ask_probability, seed=seed + repeat),
            task_indices=range(len(train)),
            seed=seed + repeat,
            env_kwargs={"tasks": list(train)},
            progress=progress,
        )
        for repeat in range(samples_per_task)
    ]
    paths["trajectories"].parent.mkdir(parents=True, exist_ok=True)
    sum(episodes[1:], episodes[0]).to_official_jsonl(paths["trajectories"])
    for role, text in (("human_prompt", HUMAN_PROMPT), ("agent_prompt", AGENT_PROMPT)):
        paths[role].parent.mkdir(parents=True, exist_ok=True)
        write_atomically(paths[role], lambda path, text=text: path.write_text(text, "utf-8"))
    return paths


def _official_task(task: BackendTask) -> dict[str, object]:
    """Return the official Backend record of a task: its three official fields alone."""
    return {
        "problem_description": task.problem_description,
        "ground_truth": task.ground_truth,
        "test_cases": dict(task.test_cases),
    }


def _write_lines(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    write_atomically(path, lambda temporary: temporary.write_text(text, "utf-8"))
