"""The frontend task record shared by loaders, the frontend environment and simulators."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FrontendTask"]


@dataclass(frozen=True)
class FrontendTask:
    """A ColBench Frontend Design task.

    The first three fields are the official record; the rest are ours and optional.

    Attributes:
        task_id: Stable identifier.
        problem_description: The vague first request (the first user message).
        ground_truth: The target HTML page (hidden from the agent; the simulated human
            sees its render).
        split: ``"train"`` or ``"test"``, when known.
        family: Kind of business a bundled page was generated for (``"bakery"``,
            ``"saas"``, ``"portfolio"``, ...); ``None`` for official data.
        sections: Section kinds in page order (``("navigation", "hero", "footer")``);
            empty for official data.
        extra: Free-form data that does not take part in equality or hashing.

    """

    task_id: str
    problem_description: str
    ground_truth: str
    split: str | None = None
    family: str | None = None
    sections: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __hash__(self) -> int:
        # Explicit (as for BackendTask): equal tasks share these fields; `extra` is a dict.
        return hash((self.task_id, self.problem_description, self.ground_truth))

    def reference(self) -> dict[str, Any]:
        """Training-time information for critics — never to be shown to the acting policy.

        Returns:
            A fresh dict with ``ground_truth``, ``problem_description``, ``sections``
            (a list) and ``family``; the environment adds the target's ``screenshot``.

        """
        return {
            "ground_truth": self.ground_truth,
            "problem_description": self.problem_description,
            "sections": list(self.sections),
            "family": self.family,
        }

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict (a superset of the official record)."""
        return {
            "task_id": self.task_id,
            "problem_description": self.problem_description,
            "ground_truth": self.ground_truth,
            "family": self.family,
            "sections": list(self.sections),
            "split": self.split,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FrontendTask:
        """Build a task from :meth:`to_dict` output."""
        return cls(
            task_id=str(data["task_id"]),
            problem_description=str(data["problem_description"]),
            ground_truth=str(data["ground_truth"]),
            split=data.get("split"),
            family=data.get("family"),
            sections=tuple(str(kind) for kind in data.get("sections") or ()),
        )
