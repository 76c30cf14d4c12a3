"""SWEET-RL's critic on one training dialogue: each turn's advantage beside what it obtained.

A comparison's report shows it (:meth:`algorithms.SweetRL.diagnose`) so that a reader can
see credit assignment at work: a dialogue where the base policy did well on a task its
other samples did worse on, each turn with the facts the human's reply told and whether
the worse samples ever heard them. Backend: a success of a task other samples failed,
the facts being the task's hidden facts that matter. Frontend: the best page of a task
where another sample's page scored lower by more than :data:`agents.SIMILARITY_MARGIN`,
the facts being the design facts the human stated
(:func:`agents.frontend_collaborator.read_reply`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sweetrl_gym import TrajectoryBuffer
from sweetrl_gym.simulators import user_said

__all__ = ["critic_example", "critic_example_table", "pick_example_dialogue"]

_DASH = "—"


def critic_example(algorithm: Any, buffer: TrajectoryBuffer) -> dict[str, Any] | None:
    """Return a trained SWEET-RL critic's advantages on one training dialogue.

    Args:
        algorithm: The trained :class:`~algorithms.SweetRL` (its ``turn_advantages``).
        buffer: The training episodes (:func:`pick_example_dialogue` picks one).

    Returns:
        ``{"task_id", "frontend", "turns"}``, a row per turn: ``action``, ``reply``,
        ``facts_told``, ``missed_by_failures`` (the told facts some worse sample never
        heard) and the critic's ``advantage``; ``None`` when no dialogue qualifies.

    """
    example = pick_example_dialogue(buffer)
    if example is None:
        return None
    trajectory, missed = example
    advantages = algorithm.turn_advantages(trajectory)
    return {
        "task_id": trajectory.task_id,
        "frontend": _is_frontend(trajectory),
        "turns": _turn_rows(trajectory, missed, advantages),
    }


def critic_example_table(example: Mapping[str, Any]) -> str:
    """Return a Markdown table of one dialogue's turns beside the critic's advantages.

    ``example`` is :func:`critic_example`'s: a successful training episode of a task that
    other samples failed (Frontend: the task's best page, other samples' lower by more
    than the margin); a fact marked * is one a worse sample never learned.
    """
    from agents.statistics import SIMILARITY_MARGIN

    if example.get("frontend"):
        what = (
            "the base policy's best page of a task where other samples' pages scored lower "
            f"by more than {SIMILARITY_MARGIN:g}. Facts (the design the human stated) marked "
            "* are ones a lower-scoring sample never heard"
        )
    else:
        what = (
            "a success of the base policy on a task where other samples failed. Facts "
            "marked * are ones a failed sample never learned"
        )
    lines = [
        f"Task `{example.get('task_id')}`, {what}: the turns that obtained them are the "
        "ones credit assignment should reward.\n",
        "| Turn | Agent | Human | Facts told | Advantage |",
        "| --- | --- | --- | --- | --- |",
    ]
    for index, row in enumerate(example.get("turns") or [], start=1):
        missed = set(row.get("missed_by_failures") or [])
        facts = ", ".join(
            f"{key}*" if key in missed else key for key in row.get("facts_told") or []
        )
        advantage = row.get("advantage")
        cells = [
            str(index),
            _clip(row.get("action", "")),
            _clip(row.get("reply", "")),
            facts or _DASH,
            _DASH if not isinstance(advantage, (int, float)) else f"{advantage:+.4f}",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _clip(text: Any, limit: int = 90) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _cell(text: str) -> str:
    """Escape a table cell: a pipe would end it, a newline the row."""
    return " ".join(str(text).split()).replace("|", "\\|")


def pick_example_dialogue(buffer: TrajectoryBuffer) -> tuple[Any, set[str]] | None:
    """Pick a multi-turn episode that did better than other samples of its task.

    Backend: a success of a task that other samples failed. Frontend: the task's best
    page, where some other sample scored lower by more than the similarity margin. Of
    the tasks whose worse samples missed a fact the better one was told, the longest
    such dialogue is kept.

    Returns:
        The episode and the facts it was told that some worse sample never was;
        ``None`` when no task qualifies.

    """
    best: tuple[Any, set[str]] | None = None
    for group in buffer.group_by_task().values():
        split = _better_and_worse(group)
        if split is None:
            continue
        better, worse = split
        told = [_facts_told(t) for t in worse]
        missed = {fact for fact in _facts_told(better) if any(fact not in x for x in told)}
        if missed and (best is None or better.num_turns > best[0].num_turns):
            best = (better, missed)
    return best


def _better_and_worse(group: Sequence[Any]) -> tuple[Any, list[Any]] | None:
    from agents.statistics import SIMILARITY_MARGIN

    if _is_frontend(group[0]):
        top = max(group, key=lambda t: t.reward)
        worse = [t for t in group if t.reward < top.reward - SIMILARITY_MARGIN]
        return (top, worse) if worse and top.num_turns >= 2 else None
    wins = [t for t in group if t.success and t.num_turns >= 2]
    losses = [t for t in group if not t.success]
    return (max(wins, key=lambda t: t.num_turns), losses) if wins and losses else None


def _is_frontend(trajectory: Any) -> bool:
    return "similarity" in trajectory.metadata


def _replies(trajectory: Any) -> list[str]:
    """Return the human's reply to each agent turn (``""`` after the last)."""
    messages = trajectory.messages
    return [
        messages[i + 1]["content"]
        if i + 1 < len(messages) and messages[i + 1]["role"] == "user"
        else ""
        for i, m in enumerate(messages)
        if m["role"] == "assistant"
    ]


def _facts_in(reply: str, trajectory: Any) -> list[str]:
    """Return the facts one reply tells: hidden facts that matter, or design facts."""
    if _is_frontend(trajectory):
        from agents.frontend_collaborator import read_reply

        return [_design_fact(update) for update in read_reply(reply)]
    facts = (trajectory.reference or {}).get("facts") or []
    return [f["key"] for f in facts if f.get("matters") and f["answer"] in reply]


def _facts_told(trajectory: Any) -> set[str]:
    """Return every fact the dialogue told (Backend: anywhere the human spoke)."""
    if _is_frontend(trajectory):
        return {fact for reply in _replies(trajectory) for fact in _facts_in(reply, trajectory)}
    return set(_facts_in(user_said(trajectory.messages), trajectory))


def _design_fact(update: Any) -> str:
    """Return a design fact in a few words, e.g. ``hero background dark blue``."""
    if update.what == "sections":
        return "sections: " + ", ".join(update.value)
    if update.what in ("insert", "remove", "replace"):
        return f"{update.what} {update.kind}" + (
            f" with {update.value}" if update.what == "replace" else ""
        )
    if update.what == "size":
        return f"{update.kind} {'taller' if update.value == 1 else 'shorter'}"
    return f"{update.kind} {update.what} {update.value}"


def _turn_rows(trajectory: Any, missed: set[str], advantages: list[float]) -> list[dict[str, Any]]:
    rows = []
    for turn, reply, advantage in zip(trajectory.turns, _replies(trajectory), advantages):
        told = _facts_in(reply, trajectory)
        rows.append(
            {
                "action": turn.action,
                "reply": reply,
                "facts_told": told,
                "missed_by_failures": sorted(set(told) & missed),
                "advantage": float(advantage),
            }
        )
    return rows
