"""Read a finished comparison folder the way the analyses need it."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.harness.compare import demonstrations_file
from benchmarks.harness.experiment_config import ComparisonConfig
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["training_run"]


def training_run(run: Path, *needed: Path) -> tuple[ComparisonConfig, TrajectoryBuffer]:
    """Return a comparison folder's config and the episodes its methods trained on.

    Args:
        run: A comparison's folder (one seed).
        needed: Other files of the folder the caller reads, checked with the same error.

    Returns:
        The folder's config (its ``config.json``, read with
        :meth:`ComparisonConfig.from_dict`), and its training episodes: the base policy's plus
        each scripted demonstrator's of ``data.demonstrations``, or the episodes of the
        ``data.trajectories`` file it trained on instead.

    Raises:
        FileNotFoundError: Naming the first of ``config.json``, the training episodes
            (``data/train.jsonl`` or the ``data.trajectories`` file) and ``needed`` that
            is missing.
        ConfigError: If ``config.json`` is not a config of this version.

    """
    config_path = run / "config.json"
    if not config_path.exists():
        raise FileNotFoundError(f"{config_path} is missing: pass a comparison's folder (one seed)")
    config = ComparisonConfig.from_dict(json.loads(config_path.read_text()))
    trajectories = config.data.trajectories
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
    for name in config.data.demonstrations:
        buffer = buffer + TrajectoryBuffer.load(demonstrations_file(run, name))
    return config, buffer
