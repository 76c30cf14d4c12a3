"""One metrics logger: namespaced scalars (``train/``, ``critic/``, ``eval/``) to trackers.

Trackers are accelerate's (``accelerate.tracking``): TensorBoard by default, and Weights
& Biases, MLflow, trackio, ... when installed (``TrainingConfig.report_to``), or one's
own, registered with ``accelerate.tracking.register_tracker_class``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["PROJECT", "MetricsLogger", "check_trackers"]

PROJECT = "sweetrl-gym"
"""The project name trackers without a folder (W&B, MLflow, trackio) file runs under."""


def check_trackers(report_to: str | Sequence[str]) -> tuple[str, ...]:
    """Return the tracker names of ``report_to``, refusing unknown or uninstalled ones.

    Args:
        report_to: A name (``"tensorboard"``, ``"wandb"``, ``"mlflow"``, ``"trackio"``,
            any ``accelerate.tracking`` tracker or one registered there), a list of
            them, or ``"none"``.

    Raises:
        ValueError: Naming the tracker, and the package it needs when not installed.

    """
    from accelerate.tracking import LOGGER_TYPE_TO_CLASS, get_available_trackers
    from accelerate.utils import LoggerType

    names = (report_to,) if isinstance(report_to, str) else tuple(report_to)
    if names in (("none",), ()):
        return ()
    available = {str(kind) for kind in get_available_trackers()}
    for name in names:
        if name not in LOGGER_TYPE_TO_CLASS:
            known = ", ".join(sorted(LOGGER_TYPE_TO_CLASS))
            raise ValueError(f"report_to: no tracker named {name!r}; known: {known}, or 'none'")
        if name in LoggerType.list() and name not in available:
            raise ValueError(f"report_to={name!r} needs its package: pip install {name}")
    return tuple(dict.fromkeys(names))


class MetricsLogger:
    """Keeps every logged scalar in memory and sends it to the trackers.

    Keys carry their namespace (``"critic/loss"``); TensorBoard groups them by it.
    Only the main process logs (pass ``enabled=False`` on the others).

    Args:
        log_dir: The folder of trackers that write files (TensorBoard), or ``None``:
            those are then left out.
        enabled: Whether this process logs at all.
        trackers: What :func:`check_trackers` takes (checked here).
        config: Settings stored with the run by trackers that keep them (W&B, MLflow).

    Attributes:
        history: ``(step, key, value)`` of everything logged, in order.

    """

    def __init__(
        self,
        log_dir: str | Path | None = None,
        *,
        enabled: bool = True,
        trackers: str | Sequence[str] = "tensorboard",
        config: Mapping[str, Any] | None = None,
    ):
        self.history: list[tuple[int, str, float]] = []
        self._positions: dict[tuple[int, str], int] = {}
        self.enabled = enabled
        self._trackers: list[Any] = []
        if enabled:
            self._trackers = _start(check_trackers(trackers), log_dir, config)

    def log(self, metrics: Mapping[str, float], step: int) -> None:
        """Record scalars at ``step``; non-finite values are kept (they signal divergence)."""
        if not self.enabled:
            return
        values = {}
        for key, value in metrics.items():
            if "/" not in key:
                raise ValueError(f"metric {key!r} needs a namespace, e.g. 'train/{key}'")
            value = float(value)
            self._record(step, key, value)
            values[key] = value if math.isfinite(value) else float("nan")
        for tracker in self._trackers:
            tracker.log(values, step=step)

    def restore(self, history: Sequence[tuple[int, str, float]]) -> None:
        """Put metrics logged by earlier launches of a resumed run before this one's."""
        for step, key, value in history:
            self._record(step, key, value)

    def _record(self, step: int, key: str, value: float) -> None:
        # One value per step and key: a resumed run that computes a metric again (the
        # critic's accuracies after its stage) replaces the earlier launch's, not repeats it.
        where = self._positions.get((step, key))
        if where is None:
            self._positions[(step, key)] = len(self.history)
            self.history.append((step, key, value))
        else:
            self.history[where] = (step, key, value)

    def latest(self, prefix: str = "") -> dict[str, float]:
        """Return the last value of every key starting with ``prefix``."""
        return {key: value for _, key, value in self.history if key.startswith(prefix)}

    def flush(self) -> None:
        """Write pending TensorBoard events to disk (the other trackers send as they go)."""
        for tracker in self._trackers:
            writer = getattr(tracker, "writer", None)
            if writer is not None:
                writer.flush()

    def close(self) -> None:
        """End every tracker's run."""
        trackers, self._trackers = self._trackers, []
        for tracker in trackers:
            tracker.finish()


def _start(names: Sequence[str], log_dir: str | Path | None, config: Any) -> list[Any]:
    from accelerate.tracking import LOGGER_TYPE_TO_CLASS

    trackers = []
    for name in names:
        kind = LOGGER_TYPE_TO_CLASS[name]
        if kind.requires_logging_directory:
            if log_dir is None:
                continue  # a run kept in memory writes no files
            tracker = kind("", str(log_dir))  # TensorBoard: events straight in log_dir
        else:
            tracker = kind(PROJECT)
        tracker.start()
        if config is not None and not kind.requires_logging_directory:
            tracker.store_init_configuration(dict(config))  # TensorBoard: config.json is there
        trackers.append(tracker)
    return trackers
