"""Task records shared by loaders, environments and simulators."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["BackendTask", "HiddenFact"]


@dataclass(frozen=True)
class HiddenFact:
    """One detail the simulated human knows and the vague request leaves out.

    Attributes:
        key: Identifier unique within the task (``"signature"``, ``"threshold"``, ...).
        topic: Kind of detail (``"signature"``, ``"threshold"``, ``"rounding"``, ...);
            the offline simulator knows generic question words for each topic.
        answer: One sentence, in the user's voice, stating the detail.
        keywords: Words specific to this detail that signal a question about it.
        matters: Whether an answer written from the description alone gets this detail
            wrong and the hidden tests notice (counted in the task's difficulty).
        value: The detail as plain JSON data (for analysis and critics).

    """

    key: str
    topic: str
    answer: str
    keywords: tuple[str, ...] = ()
    matters: bool = True
    value: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        data = asdict(self)
        data["keywords"] = list(self.keywords)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HiddenFact:
        """Build a fact from :meth:`to_dict` output."""
        return cls(
            key=str(data["key"]),
            topic=str(data["topic"]),
            answer=str(data["answer"]),
            keywords=tuple(data.get("keywords", ())),
            matters=bool(data.get("matters", True)),
            value=data.get("value"),
        )


@dataclass(frozen=True)
class BackendTask:
    """A ColBench Backend Programming task.

    The first three fields are the official record; the rest are ours and optional.

    Attributes:
        task_id: Stable identifier.
        problem_description: The vague first request (the first user message).
        ground_truth: The reference Python function (hidden from the agent).
        test_cases: Test name -> call expression, e.g. ``{"test_1": "f(1, 2)"}``.
        facts: Structured hidden facts for the simulated human (empty for official data:
            the simulator then derives them from ``ground_truth``).
        difficulty: Number of hidden facts that matter, when known.
        family: Generator family of a bundled task.
        split: ``"train"`` or ``"test"``, when known.

    """

    task_id: str
    problem_description: str
    ground_truth: str
    test_cases: dict[str, str]
    facts: tuple[HiddenFact, ...] = ()
    difficulty: int | None = None
    family: str | None = None
    split: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __hash__(self) -> int:
        # Explicit because test_cases is a dict; equal tasks share these fields.
        return hash((self.task_id, self.problem_description, self.ground_truth))

    def reference(self) -> dict[str, Any]:
        """Training-time information for critics — never to be shown to the acting policy.

        Returns:
            A fresh dict with ``ground_truth``, ``test_cases``, ``facts`` (list of dicts),
            ``problem_description``, ``difficulty`` and ``family``.

        """
        return {
            "ground_truth": self.ground_truth,
            "test_cases": dict(self.test_cases),
            "facts": [fact.to_dict() for fact in self.facts],
            "problem_description": self.problem_description,
            "difficulty": self.difficulty,
            "family": self.family,
        }

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict (a superset of the official record)."""
        return {
            "task_id": self.task_id,
            "problem_description": self.problem_description,
            "ground_truth": self.ground_truth,
            "test_cases": dict(self.test_cases),
            "facts": [fact.to_dict() for fact in self.facts],
            "difficulty": self.difficulty,
            "family": self.family,
            "split": self.split,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BackendTask:
        """Build a task from :meth:`to_dict` output."""
        return cls(
            task_id=str(data["task_id"]),
            problem_description=str(data["problem_description"]),
            ground_truth=str(data["ground_truth"]),
            test_cases={str(k): str(v) for k, v in data["test_cases"].items()},
            facts=tuple(HiddenFact.from_dict(f) for f in data.get("facts") or ()),
            difficulty=data.get("difficulty"),
            family=data.get("family"),
            split=data.get("split"),
        )
