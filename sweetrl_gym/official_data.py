"""The official ColBench release's data files by name, for messages and docs (no downloads).

The official README (facebookresearch/sweet_rl) gets the Backend tasks and the offline
trajectories from the Hugging Face dataset ``facebook/collaborative_agent_bench``; the
Frontend tasks are not on the hub: its README builds them from WebSight v0.2
(``HuggingFaceM4/WebSight``), the first 10,000 of the first 20,000 pages for training and
the next 10,000 for testing. Nothing here touches the network: these are the words an
error uses to say which file is missing and how to get it.
"""

from __future__ import annotations

__all__ = [
    "AGENT_PROMPT_FILES",
    "BACKEND_TASK_FILES",
    "HUB_DATASET",
    "HUMAN_PROMPT_FILES",
    "OFFLINE_TRAJECTORIES",
    "REPOSITORY",
    "download_command",
    "missing_task_file_hint",
    "missing_trajectory_file_hint",
]

HUB_DATASET = "facebook/collaborative_agent_bench"
"""The hub dataset of the official release."""
REPOSITORY = "https://github.com/facebookresearch/sweet_rl"
"""The official code, whose prompt files (CC-BY-NC) are read from the user's clone."""
HUMAN_PROMPT_FILES = {
    "backend": "prompts/human_simulator_code_prompt.txt",
    "frontend": "prompts/human_simulator_html_prompt.txt",
}
"""The official simulated human's prompt for each kind of task, by its path in
:data:`REPOSITORY`."""
AGENT_PROMPT_FILES = {
    "backend": "prompts/llm_agent_code_prompt.txt",
    "frontend": "prompts/llm_agent_html_prompt.txt",
}
"""The official agent's system prompt for each kind of task (the published trajectories
were made with the Backend one), by its path in :data:`REPOSITORY`."""
BACKEND_TASK_FILES = {"train": "backend_tasks/train.jsonl", "test": "backend_tasks/test.jsonl"}
"""The official Backend task files in :data:`HUB_DATASET` (10k train; the paper tests on
the first 1,000 test tasks)."""
OFFLINE_TRAJECTORIES = "colbench_code_offline_15k_llama8b.jsonl"
"""The published offline data SWEET-RL trains on: 15k Llama-3.1-8B-Instruct Backend
episodes (5k tasks x 3), the official sweet_rl trajectory format."""


def download_command(*files: str) -> str:
    """Return the command that downloads files of :data:`HUB_DATASET` into ``data/colbench``.

    Args:
        files: Paths inside the dataset (e.g. :data:`OFFLINE_TRAJECTORIES`).

    """
    return (
        f"hf download {HUB_DATASET} {' '.join(files)} --repo-type dataset --local-dir data/colbench"
    )


def missing_task_file_hint(kind: str, split: str) -> str:
    """Say which official task file a missing task file stands for, and how to get it.

    Args:
        kind: ``"backend"`` or ``"frontend"``.
        split: ``"train"`` or ``"test"``.

    """
    if kind == "frontend":
        return (
            f"the official Frontend {split} tasks are frontend_tasks/{split}.jsonl, which the "
            "official README builds from WebSight v0.2 (HuggingFaceM4/WebSight): the first "
            "10,000 of its first 20,000 pages train, the next 10,000 test"
        )
    name = BACKEND_TASK_FILES.get(split, BACKEND_TASK_FILES["train"])
    return (
        f"the official Backend {split} tasks are {name} of the hub dataset {HUB_DATASET}: "
        f"`{download_command(*BACKEND_TASK_FILES.values())}`, then give "
        f"data/colbench/{name}"
    )


def missing_trajectory_file_hint() -> str:
    """Say how to get the published offline trajectories (for a missing trajectory file)."""
    return (
        f"the published offline data is {OFFLINE_TRAJECTORIES} of the hub dataset "
        f"{HUB_DATASET}: `{download_command(OFFLINE_TRAJECTORIES)}`"
    )
