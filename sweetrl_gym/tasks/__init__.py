"""ColBench tasks: records, loaders and the bundled generators (backend and frontend)."""

from sweetrl_gym.tasks.bundled import BUNDLED_BACKEND_SHA256
from sweetrl_gym.tasks.frontend_generator import BUNDLED_FRONTEND_SHA256
from sweetrl_gym.tasks.frontend_loaders import frontend_task_from_record, load_frontend_tasks
from sweetrl_gym.tasks.frontend_types import FrontendTask
from sweetrl_gym.tasks.loaders import TaskFormatError, load_backend_tasks, task_from_record
from sweetrl_gym.tasks.types import BackendTask, HiddenFact

__all__ = [
    "BUNDLED_BACKEND_SHA256",
    "BUNDLED_FRONTEND_SHA256",
    "BackendTask",
    "FrontendTask",
    "HiddenFact",
    "TaskFormatError",
    "frontend_task_from_record",
    "load_backend_tasks",
    "load_frontend_tasks",
    "task_from_record",
]
