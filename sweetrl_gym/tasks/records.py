"""Reading task records: JSONL files (plain or gzip) and in-memory lists, with clear errors.

Both task loaders (backend and frontend) read records the same way and differ only in
how one record becomes a task; they pass that function in.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import os
import zlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "SPLITS",
    "TaskFormatError",
    "load_task_source",
    "read_task_jsonl",
    "record_task_id",
    "require_str",
    "tasks_from_records",
]

SPLITS = ("train", "test")

T = TypeVar("T")
RecordToTask = Callable[..., T]  # (record, split=..., where=...) -> task


class TaskFormatError(ValueError):
    """A task record is malformed; the message names where."""


def load_task_source(
    source: Any,
    split: str,
    *,
    bundled: Callable[[str], list[T]],
    task_type: type[T],
    build: RecordToTask[T],
    missing_hint: str = "",
) -> list[T]:
    """Read tasks from ``"bundled"``, a JSONL path, or a list of tasks and/or records.

    Args:
        source: What to read.
        split: ``"train"`` or ``"test"``: selects the bundled split; for a file or list
            it is recorded on tasks that name none.
        bundled: Returns the bundled tasks of a split.
        task_type: The task class (list items of this type are kept as they are).
        build: Turns a record into a task: ``build(record, split=..., where=...)``.
        missing_hint: Added to the error for a path that does not exist (which official
            file it stands for and how to get it).

    Raises:
        ValueError: Unknown split, or no tasks.
        TypeError: ``source`` is none of the above.
        FileNotFoundError: ``source`` is a path that does not exist.

    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if isinstance(source, str) and source == "bundled":
        tasks = bundled(split)
    elif isinstance(source, (str, os.PathLike)):
        tasks = read_task_jsonl(Path(source), split, build, missing_hint=missing_hint)
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping)):
        tasks = tasks_from_records(source, split, task_type, build)
    else:
        raise TypeError(
            f"source must be 'bundled', a path or a list of tasks, got {type(source).__name__}"
        )
    if not tasks:
        raise ValueError(f"no tasks in {source!r}")
    return tasks


def record_task_id(
    record: Mapping[str, Any], kind: str, description: str, ground_truth: str, where: str
) -> str:
    """Return a record's ``task_id``, or one derived from its content when it has none.

    The derived id (``colbench-{kind}-`` and 12 hex digits) depends only on the request
    and the reference, so the same task read from anywhere gets the same id.

    Raises:
        TaskFormatError: If the record's ``task_id`` is neither a non-empty string nor
            an integer.

    """
    task_id = record.get("task_id")
    if task_id is None:
        digest = hashlib.sha1((description + "\0" + ground_truth).encode()).hexdigest()[:12]
        return f"colbench-{kind}-{digest}"
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool) or str(task_id) == "":
        raise TaskFormatError(f"{where}: 'task_id' must be a non-empty string or an integer")
    return str(task_id)


def read_task_jsonl(
    path: Path, split: str, build: RecordToTask[T], *, missing_hint: str = ""
) -> list[T]:
    """Read one task a line from ``path`` (``.jsonl`` or ``.jsonl.gz``).

    Args:
        path: The file.
        split: Recorded on tasks that name none.
        build: Turns a record into a task: ``build(record, split=..., where=...)``.
        missing_hint: Added to the error when the file does not exist.

    Returns:
        The tasks in file order; repeated ids get a ``-2``, ``-3``, ... suffix.

    Raises:
        FileNotFoundError: The file does not exist.
        TaskFormatError: A line is not JSON, not UTF-8, or not a valid record (the
            message names file and line).

    """
    if not path.exists():
        raise FileNotFoundError(
            f"task file not found: {path}" + (f" ({missing_hint})" if missing_hint else "")
        )
    opener = gzip.open if path.suffix == ".gz" else open
    tasks: list[T] = []
    ids: set[str] = set()
    line_no = 0
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{line_no}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise TaskFormatError(f"{where}: not valid JSON ({exc.msg})") from exc
                tasks.append(_unique_id(build(record, split=split, where=where), ids))
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        kind = "UTF-8 JSONL file (gzip)" if opener is gzip.open else "UTF-8 JSONL file"
        raise TaskFormatError(f"{path}:{line_no + 1}: not a {kind} ({exc})") from exc
    return tasks


def tasks_from_records(
    records: Iterable[Any], split: str, task_type: type[T], build: RecordToTask[T]
) -> list[T]:
    """Build tasks from a list of ``task_type`` objects and/or record dicts.

    Raises:
        TaskFormatError: A record is malformed (the message names its index).

    """
    tasks: list[T] = []
    ids: set[str] = set()
    for index, record in enumerate(records):
        task = (
            record
            if isinstance(record, task_type)
            else build(record, split=split, where=f"task {index}")
        )
        tasks.append(_unique_id(task, ids))
    return tasks


def _unique_id(task: Any, ids: set[str]) -> Any:
    if task.task_id not in ids:
        ids.add(task.task_id)
        return task
    n = 2
    while f"{task.task_id}-{n}" in ids:
        n += 1
    new_id = f"{task.task_id}-{n}"
    ids.add(new_id)
    return dataclasses.replace(task, task_id=new_id)


def require_str(record: Mapping[str, Any], key: str, where: str) -> str:
    """Return ``record[key]``, which must be a non-empty string.

    Raises:
        TaskFormatError: If it is missing, empty or not a string.

    """
    if key not in record:
        raise TaskFormatError(f"{where}: missing field {key!r}")
    value = record[key]
    if not isinstance(value, str) or not value.strip():
        raise TaskFormatError(f"{where}: field {key!r} must be a non-empty string")
    return value
