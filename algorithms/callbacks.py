"""Hooks into training: observe metrics, evaluate, stop early."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from algorithms.base import Algorithm

__all__ = ["Callback", "EvaluateCallback", "StopAfterSteps"]


class Callback:
    """Base class: override the hooks you need. ``on_step`` returning ``False`` stops training.

    A stopped ``fit`` writes a checkpoint (when the run has an ``output_dir``), returns
    the metrics so far and sets ``algorithm.stopped``; ``fit(buffer, resume=True)``
    continues from there.
    """

    def on_fit_start(self, algorithm: Algorithm) -> None:
        """Call before the first stage."""

    def on_step(
        self, algorithm: Algorithm, stage: str, step: int, metrics: Mapping[str, float]
    ) -> bool | None:
        """Call after every optimizer step with that step's metrics; ``False`` stops."""
        return None

    def on_stage_end(self, algorithm: Algorithm, stage: str, metrics: Mapping[str, float]) -> None:
        """Call when a stage (e.g. ``"critic"``, ``"policy"``) has finished."""

    def on_fit_end(self, algorithm: Algorithm, metrics: Mapping[str, float]) -> None:
        """Call once ``fit`` is done (also after an early stop)."""


class StopAfterSteps(Callback):
    """Stops training after ``steps`` optimizer steps in total (across stages).

    Args:
        steps: Optimizer steps to allow.

    """

    def __init__(self, steps: int):
        if steps < 1:
            raise ValueError(f"steps must be at least 1, got {steps}")
        self.steps = steps
        self._seen = 0

    def on_step(self, algorithm: Any, stage: str, step: int, metrics: Any) -> bool:
        """Count the step; ``False`` once the budget is spent."""
        self._seen += 1
        return self._seen < self.steps


class EvaluateCallback(Callback):
    """Evaluates the policy on an environment at the end of the policy stage (``eval/`` keys).

    Args:
        env_id: Environment id, e.g. ``"ColBench-Backend-v0"``.
        stages: Stages after which to evaluate.
        **evaluate_kwargs: Passed to :func:`agents.evaluate` (``num_tasks``, ``split``,
            ``env_kwargs``, ...).

    """

    def __init__(
        self, env_id: str, *, stages: tuple[str, ...] = ("policy",), **evaluate_kwargs: Any
    ):
        self.env_id = env_id
        self.stages = stages
        self.evaluate_kwargs = evaluate_kwargs
        self.results: list[dict[str, float]] = []

    def on_stage_end(self, algorithm: Algorithm, stage: str, metrics: Mapping[str, float]) -> None:
        """Run the evaluation and log it."""
        if stage not in self.stages:
            return
        from agents import evaluate

        results = evaluate(algorithm.policy, self.env_id, **self.evaluate_kwargs)
        self.results.append(results)
        algorithm.log_metrics({f"eval/{key}": value for key, value in results.items()})
