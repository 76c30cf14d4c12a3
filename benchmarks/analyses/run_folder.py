"""Read a finished comparison folder the way the analyses need it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.harness.compare import demonstrations_file
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["training_run"]


def training_run(run: Path, *needed: Path) -> tuple[dict[str, Any], TrajectoryBuffer]:
    """Return a comparison folder's config and the episodes its methods trained on.

    Args:
        run: A comparison's folder (one seed).
        needed: Other files of the folder the caller reads, checked with the same error.

    Returns:
        The folder's ``config.json``, and its training episodes: the base policy's plus
        each scripted demonstrator's of ``data.demonstrations``, or the episodes of the
        ``data.trajectories`` file it trained on instead.

    Raises:
        FileNotFoundError: Naming the first of ``config.json``, the training episodes
            (``data/train.jsonl`` or the ``data.trajectories`` file) and ``needed`` that
            is missing.

    """
    config_path = run / "config.json"
    if not config_path.exists():
        raise FileNotFoundError(f"{config_path} is missing: pass a comparison's folder (one seed)")
    config = json.loads(config_path.read_text())
    trajectories = config.get("data", {}).get("trajectories")
    train_path = run / "data" / "train.jsonl"
    if trajectories:  # the file's absolute path, as the run read it
        record = run / "data" / "trajectories.json"
        exists = record.exists()
        train_path = Path(json.loads(record.read_text())["path"] if exists else trajectories)
    for path in (train_path, *needed):
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: pass a comparison's folder (one seed)")
    if trajectories:
        return config, TrajectoryBuffer.read(train_path)
    buffer = TrajectoryBuffer.load(train_path)
    for name in config["data"].get("demonstrations", ()):
        buffer = buffer + TrajectoryBuffer.load(demonstrations_file(run, name))
    return config, buffer
