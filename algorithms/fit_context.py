"""What a comparison tells an algorithm about its run, and what the algorithm reports back.

``sweetrl compare`` knows a method only through :class:`~algorithms.Algorithm`'s hooks:
:meth:`~algorithms.Algorithm.prepare` before its fit (a control reads the outputs of the
method it controls there) and :meth:`~algorithms.Algorithm.diagnose` after it (what the
report shows beyond the evaluation: SWEET-RL's turn pairs judged by the environment, its
critic on one dialogue). Both get a :class:`FitContext`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweetrl_gym.similarity import Similarity
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["Diagnostics", "FitContext"]


@dataclass(frozen=True)
class FitContext:
    """The run a fit is part of.

    Attributes:
        buffer: The training episodes (every method of a comparison gets the same).
        directory: The method's own folder (``methods/NAME``): a hook may keep files
            there (written by the main process only, under several processes).
        seed: The comparison's seed.
        similarity: How the environment scores a page against its target (Frontend), as
            the run's config sets it; ``None`` on the Backend.
        source: For a control (an algorithm whose ``controls`` names another method):
            the folder of the method it controls, whose :meth:`diagnose` kept there what
            the control re-uses. ``None`` otherwise.

    """

    buffer: TrajectoryBuffer
    directory: Path
    seed: int = 0
    similarity: Similarity | None = None
    source: Path | None = None


@dataclass(frozen=True)
class Diagnostics:
    """What a method reports about its fit beyond its evaluation.

    Attributes:
        record: JSON-able values, kept in the method's ``fit.json`` under ``diagnostics``
            (and so in ``results.json``).
        markdown: The method's section of the comparison's report (``results.md``),
            under a heading with its label; ``""``: none.
        summary: One line for the report pooled over seeds (``sweetrl pool``), e.g.
            counts; ``""``: none.

    """

    record: Mapping[str, Any] = field(default_factory=dict)
    markdown: str = ""
    summary: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form kept in ``fit.json``."""
        return {"record": dict(self.record), "markdown": self.markdown, "summary": self.summary}
