"""The two ways of scoring a Backend answer: ours and the official evaluator's.

``"ours"`` (the default) runs the answer as a module and asks whether it computes what
the reference computes; ``"official"`` reproduces the official evaluator
(``check_correctness`` in facebookresearch/sweet_rl), the metric the paper's numbers
are in. Both run the code in the sandbox: ``"official"`` copies the evaluator's
semantics, not its exposure (it executes answers in its own process).

What ``"official"`` does differently, each a rule of the official code:

* an answer containing any of :data:`OFFICIAL_BANNED_SUBSTRINGS` anywhere (comments
  and strings included) scores 0;
* only the first ```` ```python ```` block of the answer counts, else the first
  ```` ``` ```` block; the text around it is dropped (our scoring keeps it);
* answer and reference are each executed inside a function, once per test
  (``exec(code); eval(test)`` with the function's locals), so a name the code defines
  at its top level (an import, a helper function, the function itself when it recurses)
  is not visible from inside its functions: such a call raises ``NameError``;
* a test passes only when the reference returned something other than ``None`` and
  the answer's output is ``==`` to it (no float tolerance, an exception never matches).
"""

from __future__ import annotations

import difflib

__all__ = [
    "DEFAULT_SCORING",
    "OFFICIAL_BANNED_SUBSTRINGS",
    "SCORINGS",
    "check_scoring",
    "official_answer_code",
]

SCORINGS = ("ours", "official")
"""The scoring rules a Backend answer can be scored by."""
DEFAULT_SCORING = "ours"
"""Our scoring: it measures whether the answer computes what the reference computes,
which the official rules miss for correct answers that import a module at their top
level, define a helper or recurse (all score 0 there)."""
OFFICIAL_BANNED_SUBSTRINGS = (
    "import os",
    "from os",
    "import sys",
    "from sys",
    "sudo",
    "transformers",
    "exit(",
    "quit(",
    "argparse",
)
"""Text whose presence anywhere in an answer makes the official evaluator score it 0."""


def check_scoring(scoring: object) -> str:
    """Return ``scoring`` if it names a scoring rule; refuse anything else.

    Raises:
        ValueError: Naming the value, the choices and the closest one.

    """
    if isinstance(scoring, str) and scoring in SCORINGS:
        return scoring
    close = difflib.get_close_matches(str(scoring), SCORINGS, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    choices = ", ".join(map(repr, SCORINGS))
    raise ValueError(f"scoring must be one of {choices}, got {scoring!r}{hint}")


def official_answer_code(answer: str) -> tuple[str | None, str | None]:
    """Return the code the official evaluator runs for an answer, or why it runs none.

    Args:
        answer: The answer text, unstripped (as the official environment cuts it).

    Returns:
        ``(code, None)``, or ``(None, reason)`` when a banned substring scores it 0.

    """
    for banned in OFFICIAL_BANNED_SUBSTRINGS:
        if banned in answer:
            return None, f"official rule: the answer contains {banned!r}"
    for fence in ("```python", "```"):
        # The text between the first fence and the next ``` (or the end).
        _, found, after = answer.partition(fence)
        if found:
            answer = after.partition("```")[0]
    return answer, None
