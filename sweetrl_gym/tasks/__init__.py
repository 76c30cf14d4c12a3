"""ColBench tasks: records, loaders and the bundled generator."""

from sweetrl_gym.tasks.bundled import BUNDLED_BACKEND_SHA256
from sweetrl_gym.tasks.loaders import TaskFormatError, load_backend_tasks, task_from_record
from sweetrl_gym.tasks.types import BackendTask, HiddenFact

__all__ = [
    "BUNDLED_BACKEND_SHA256",
    "BackendTask",
    "HiddenFact",
    "TaskFormatError",
    "load_backend_tasks",
    "task_from_record",
]
