"""Loading backend tasks: bundled, official ColBench JSONL, or in-memory records."""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from sweetrl_gym.official_data import missing_task_file_hint
from sweetrl_gym.tasks.bundled import bundled_backend_tasks
from sweetrl_gym.tasks.records import (
    TaskFormatError,
    load_task_source,
    record_task_id,
    require_str,
)
from sweetrl_gym.tasks.types import BackendTask, HiddenFact

__all__ = ["TaskFormatError", "load_backend_tasks", "task_from_record"]


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
        FileNotFoundError: The path does not exist (the message names the official file
            it stands for and how to get it).
        ValueError: Unknown split, bad difficulty filter, unknown family, or nothing left
            after filtering.

    """
    tasks = load_task_source(
        source,
        split,
        bundled=bundled_backend_tasks,
        task_type=BackendTask,
        build=task_from_record,
        missing_hint=missing_task_file_hint("backend", split),
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


def _check_python(code: str, where: str) -> None:
    """Refuse a reference that does not parse: every answer would otherwise score 0."""
    try:
        ast.parse(code)
    except SyntaxError as exc:
        raise TaskFormatError(
            f"{where}: 'ground_truth' is not valid Python ({exc.msg}, its line {exc.lineno})"
        ) from exc
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, deep nesting
        raise TaskFormatError(f"{where}: 'ground_truth' is not valid Python ({exc})") from exc


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
    _check_python(ground_truth, where)
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
    return BackendTask(
        task_id=record_task_id(record, "backend", description, ground_truth, where),
        problem_description=description,
        ground_truth=ground_truth,
        test_cases={str(k): v for k, v in tests.items()},
        facts=facts,
        difficulty=difficulty,
        family=record.get("family"),
        split=record.get("split") or split,
    )
