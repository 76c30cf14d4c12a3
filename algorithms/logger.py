"""One metrics logger: namespaced scalars (``train/``, ``critic/``, ``eval/``) to TensorBoard."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["MetricsLogger"]


class MetricsLogger:
    """Keeps every logged scalar in memory and writes it to TensorBoard when given a directory.

    Keys carry their namespace (``"critic/loss"``); TensorBoard groups them by it.
    Only the main process writes (pass ``enabled=False`` on the others).

    Args:
        log_dir: TensorBoard directory, or ``None`` for memory only.
        enabled: Whether this process logs at all.

    Attributes:
        history: ``(step, key, value)`` of everything logged, in order.

    """

    def __init__(self, log_dir: str | Path | None = None, *, enabled: bool = True):
        self.history: list[tuple[int, str, float]] = []
        self.enabled = enabled
        self._writer: Any = None
        if log_dir is not None and enabled:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(log_dir=str(log_dir))

    def log(self, metrics: Mapping[str, float], step: int) -> None:
        """Record scalars at ``step``; non-finite values are kept (they signal divergence)."""
        if not self.enabled:
            return
        for key, value in metrics.items():
            if "/" not in key:
                raise ValueError(f"metric {key!r} needs a namespace, e.g. 'train/{key}'")
            value = float(value)
            self.history.append((step, key, value))
            if self._writer is not None:
                self._writer.add_scalar(key, value if math.isfinite(value) else float("nan"), step)

    def latest(self, prefix: str = "") -> dict[str, float]:
        """Return the last value of every key starting with ``prefix``."""
        return {key: value for _, key, value in self.history if key.startswith(prefix)}

    def flush(self) -> None:
        """Write pending events to disk."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Flush and close the TensorBoard writer."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
