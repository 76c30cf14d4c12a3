"""Loading backend tasks: bundled, official ColBench JSONL, or in-memory records."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sweetrl_gym.tasks.bundled import bundled_backend_tasks
from sweetrl_gym.tasks.records import (
    TaskFormatError,
    read_task_jsonl,
    require_str,
    tasks_from_records,
)
from sweetrl_gym.tasks.types import BackendTask, HiddenFact

__all__ = ["TaskFormatError", "load_backend_tasks", "task_from_record"]

SPLITS = ("train", "test")


TaskSource = str | os.PathLike[str] | Iterable[BackendTask | Mapping[str, Any]]


def load_backend_tasks(
    source: TaskSource = "bundled",
    split: str = "train",
    difficulty: int | tuple[int, int] | None = None,
    families: str | Iterable[str] | None = None,
) -> list[BackendTask]:
    """Load Backend Programming tasks.

    Args:
        source: ``"bundled"`` (our generated tasks), a path to an official ColBench JSONL
            file (``.jsonl`` or ``.jsonl.gz``, one record a line with
            ``problem_description``, ``ground_truth`` and ``test_cases``), or a list of
            :class:`BackendTask` / record dicts.
        split: ``"train"`` or ``"test"``: selects the bundled split; for a file or list it
            is recorded on tasks that do not name their own.
        difficulty: Keep only tasks of this difficulty (an int) or range (``(lo, hi)``,
            inclusive). Tasks of unknown difficulty are dropped when filtering.
        families: Keep only tasks of these families (a name or names, e.g.
            ``"pass_fail"``); tasks of unknown family are dropped when filtering.

    Returns:
        The tasks, in source order.

    Raises:
        TaskFormatError: A record is malformed (the message names file and line).
        FileNotFoundError: The path does not exist.
        ValueError: Unknown split, bad difficulty filter, unknown family, or nothing left
            after filtering.

    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if isinstance(source, str) and source == "bundled":
        tasks = bundled_backend_tasks(split)
    elif isinstance(source, (str, os.PathLike)):
        tasks = read_task_jsonl(Path(source), split, task_from_record)
    elif isinstance(source, Iterable):
        tasks = tasks_from_records(source, split, BackendTask, task_from_record)
    else:
        raise TypeError(
            f"source must be 'bundled', a path or a list of tasks, got {type(source).__name__}"
        )
    if families is not None:
        tasks = _of_families(tasks, families, source)
    if difficulty is not None:
        lo, hi = (difficulty, difficulty) if isinstance(difficulty, int) else difficulty
        if lo > hi:
            raise ValueError(f"empty difficulty range {difficulty!r}")
        tasks = [t for t in tasks if t.difficulty is not None and lo <= t.difficulty <= hi]
        if not tasks:
            raise ValueError(f"no task has difficulty {difficulty!r}")
    if not tasks:
        raise ValueError(f"no tasks in {source!r}")
    return tasks


def _of_families(
    tasks: list[BackendTask], families: str | Iterable[str], source: Any
) -> list[BackendTask]:
    wanted = {families} if isinstance(families, str) else set(families)
    present = {t.family for t in tasks}
    unknown = sorted(wanted - present)
    if unknown:
        known = ", ".join(sorted(f for f in present if f)) or "none"
        raise ValueError(f"no task of family {unknown} in {source!r}; its families: {known}")
    return [t for t in tasks if t.family in wanted]


def task_from_record(record: Any, split: str | None = None, where: str = "record") -> BackendTask:
    """Validate one official (or extended) task record and build a :class:`BackendTask`.

    Args:
        record: A dict with ``problem_description``, ``ground_truth`` and ``test_cases``
            (a dict name -> call expression, or that dict as a JSON string); optionally
            ``task_id``, ``facts``, ``difficulty``, ``family``, ``split``.
        split: Split to record when the record names none.
        where: Location for error messages.

    Raises:
        TaskFormatError: The record is malformed.

    """
    if not isinstance(record, Mapping):
        raise TaskFormatError(f"{where}: expected a JSON object, got {type(record).__name__}")
    description = require_str(record, "problem_description", where)
    ground_truth = require_str(record, "ground_truth", where)
    if "test_cases" not in record:
        raise TaskFormatError(f"{where}: missing field 'test_cases'")
    tests = record["test_cases"]
    if isinstance(tests, str):
        try:
            tests = json.loads(tests)
        except json.JSONDecodeError as exc:
            raise TaskFormatError(f"{where}: 'test_cases' is a string but not JSON") from exc
    if not isinstance(tests, Mapping) or not tests:
        raise TaskFormatError(f"{where}: 'test_cases' must be a non-empty object name -> call")
    for name, expr in tests.items():
        if not isinstance(expr, str) or not expr.strip():
            raise TaskFormatError(f"{where}: test {name!r} must be a non-empty call expression")
    try:
        facts = tuple(HiddenFact.from_dict(f) for f in record.get("facts") or ())
    except (KeyError, TypeError, AttributeError) as exc:
        raise TaskFormatError(f"{where}: malformed 'facts' ({exc})") from exc
    difficulty = record.get("difficulty")
    if difficulty is not None and not isinstance(difficulty, int):
        raise TaskFormatError(f"{where}: 'difficulty' must be an integer")
    task_id = record.get("task_id")
    if task_id is None:
        digest = hashlib.sha1((description + "\0" + ground_truth).encode()).hexdigest()[:12]
        task_id = f"colbench-backend-{digest}"
    return BackendTask(
        task_id=str(task_id),
        problem_description=description,
        ground_truth=ground_truth,
        test_cases={str(k): v for k, v in tests.items()},
        facts=facts,
        difficulty=difficulty,
        family=record.get("family"),
        split=record.get("split") or split,
    )
