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
BUNDLED_BACKEND_SHA256 = "48a0cd55690f0f97ab7de24b307eddba888a7e21a5c3593fa9551f5babaeace0"


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
    """Return the bundled tasks of ``split`` (``"train"``: 10,000, ``"test"``: 3,000).

    The first 1,000 test tasks are the official split's size; evaluating on them alone
    (``num_tasks=1000``) compares with results reported on 1,000 test tasks.
    """
    return [task for task in _all_tasks() if task.split == split]
