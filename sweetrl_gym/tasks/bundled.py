"""The bundled backend tasks: a generated, shipped and hash-pinned data file."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from pathlib import Path

from sweetrl_gym.tasks.types import BackendTask

__all__ = ["BUNDLED_BACKEND_PATH", "BUNDLED_BACKEND_SHA256", "bundled_backend_tasks"]

BUNDLED_BACKEND_PATH = Path(__file__).parent / "data" / "backend_bundled.jsonl.gz"
# sha256 of the decompressed JSONL. Changing the generator changes the task set: regenerate
# with `python -m sweetrl_gym.tasks.generator --write` and update this pin deliberately.
BUNDLED_BACKEND_SHA256 = "c10e0c4a50e4c6820df592d4078a56c10b567008d71a1a336b678036ceefe6f7"


@functools.lru_cache(maxsize=1)
def _all_tasks() -> tuple[BackendTask, ...]:
    try:
        data = gzip.decompress(BUNDLED_BACKEND_PATH.read_bytes())
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"bundled task file missing: {BUNDLED_BACKEND_PATH} (reinstall sweetrl-gym)"
        ) from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != BUNDLED_BACKEND_SHA256:
        raise RuntimeError(
            f"bundled task file {BUNDLED_BACKEND_PATH} has sha256 {digest}, expected "
            f"{BUNDLED_BACKEND_SHA256}: the file is corrupt or out of date"
        )
    return tuple(BackendTask.from_dict(json.loads(line)) for line in data.splitlines())


def bundled_backend_tasks(split: str) -> list[BackendTask]:
    """Return the bundled tasks of ``split`` (``"train"``: 10,000, ``"test"``: 1,000)."""
    return [task for task in _all_tasks() if task.split == split]
