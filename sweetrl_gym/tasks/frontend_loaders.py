"""Loading frontend tasks: bundled, official ColBench JSONL, or in-memory records."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sweetrl_gym.tasks.frontend_generator import bundled_frontend_tasks
from sweetrl_gym.tasks.frontend_types import FrontendTask
from sweetrl_gym.tasks.loaders import SPLITS
from sweetrl_gym.tasks.records import (
    TaskFormatError,
    read_task_jsonl,
    require_str,
    tasks_from_records,
)

__all__ = ["frontend_task_from_record", "load_frontend_tasks"]

FrontendTaskSource = str | os.PathLike[str] | Iterable[FrontendTask | Mapping[str, Any]]

_HTML_TAG = re.compile(r"<html[\s>]", re.IGNORECASE)


def load_frontend_tasks(
    source: FrontendTaskSource = "bundled", split: str = "train"
) -> list[FrontendTask]:
    """Load Frontend Design tasks.

    Args:
        source: ``"bundled"`` (our generated pages: 10,000 train, 500 test), a path to an
            official ColBench frontend JSONL file (``.jsonl`` or ``.jsonl.gz``, one record
            a line with ``problem_description`` and ``ground_truth`` HTML), or a list of
            :class:`FrontendTask` / record dicts.
        split: ``"train"`` or ``"test"``: selects the bundled split (only that split is
            generated); for a file or list it is recorded on tasks that name none.

    Returns:
        The tasks, in source order; repeated ids get a ``-2``, ``-3``, ... suffix.

    Raises:
        TaskFormatError: A record is malformed (the message names file and line).
        FileNotFoundError: The path does not exist.
        ValueError: Unknown split, or no tasks.
        TypeError: ``source`` is none of the above.

    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if isinstance(source, str) and source == "bundled":
        tasks = bundled_frontend_tasks(split)
    elif isinstance(source, (str, os.PathLike)):
        tasks = read_task_jsonl(Path(source), split, frontend_task_from_record)
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping)):
        tasks = tasks_from_records(source, split, FrontendTask, frontend_task_from_record)
    else:
        raise TypeError(
            f"source must be 'bundled', a path or a list of tasks, got {type(source).__name__}"
        )
    if not tasks:
        raise ValueError(f"no tasks in {source!r}")
    return tasks


def _optional_str(record: Mapping[str, Any], key: str, where: str) -> str | None:
    value = record.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise TaskFormatError(f"{where}: field {key!r} must be a non-empty string when given")
    return value


def frontend_task_from_record(
    record: Any, split: str | None = None, where: str = "record"
) -> FrontendTask:
    """Validate one official (or extended) frontend record and build a :class:`FrontendTask`.

    Args:
        record: A dict with ``problem_description`` and ``ground_truth`` (an HTML page
            with an ``<html>`` element); optionally ``task_id``, ``family``, ``sections``
            (a list of section kinds) and ``split``. Other keys are ignored.
        split: Split to record when the record names none.
        where: Location for error messages.

    Returns:
        The task; without a ``task_id`` it gets ``colbench-frontend-<12 hex>``, a hash of
        the description and the page, so the same record always gets the same id.

    Raises:
        TaskFormatError: The record is malformed.

    """
    if not isinstance(record, Mapping):
        raise TaskFormatError(f"{where}: expected a JSON object, got {type(record).__name__}")
    description = require_str(record, "problem_description", where)
    ground_truth = require_str(record, "ground_truth", where)
    if not _HTML_TAG.search(ground_truth):
        raise TaskFormatError(f"{where}: 'ground_truth' is not an HTML page (no <html> tag)")
    sections = record.get("sections") or ()
    if not isinstance(sections, (list, tuple)) or not all(
        isinstance(kind, str) and kind for kind in sections
    ):
        raise TaskFormatError(f"{where}: 'sections' must be a list of section names")
    family = _optional_str(record, "family", where)
    record_split = _optional_str(record, "split", where)
    task_id = record.get("task_id")
    if task_id is None:
        digest = hashlib.sha1((description + "\0" + ground_truth).encode()).hexdigest()[:12]
        task_id = f"colbench-frontend-{digest}"
    elif not isinstance(task_id, (str, int)) or isinstance(task_id, bool) or str(task_id) == "":
        raise TaskFormatError(f"{where}: 'task_id' must be a non-empty string or an integer")
    return FrontendTask(
        task_id=str(task_id),
        problem_description=description,
        ground_truth=ground_truth,
        split=record_split or split,
        family=family,
        sections=tuple(sections),
    )
