"""Loading frontend tasks: bundled, official ColBench JSONL, or in-memory records."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from sweetrl_gym.official_data import missing_task_file_hint
from sweetrl_gym.tasks.frontend_generator import bundled_frontend_tasks
from sweetrl_gym.tasks.frontend_types import FrontendTask
from sweetrl_gym.tasks.records import (
    TaskFormatError,
    load_task_source,
    record_task_id,
    require_str,
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
        FileNotFoundError: The path does not exist (the message names the official file
            it stands for and how to get it).
        ValueError: Unknown split, or no tasks.
        TypeError: ``source`` is none of the above.

    """
    return load_task_source(
        source,
        split,
        bundled=bundled_frontend_tasks,
        task_type=FrontendTask,
        build=frontend_task_from_record,
        missing_hint=missing_task_file_hint("frontend", split),
    )


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
    return FrontendTask(
        task_id=record_task_id(record, "frontend", description, ground_truth, where),
        problem_description=description,
        ground_truth=ground_truth,
        split=record_split or split,
        family=family,
        sections=tuple(sections),
    )
