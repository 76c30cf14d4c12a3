"""An imperfect Frontend collaborator: the warm start's demonstrator for design tasks.

It sees only the dialogue (no target page). It keeps a running picture of the design
(:class:`~sweetrl_gym.simulators.skeleton.PageSketch`), starting from the default skeleton, and
updates it from what the simulated human says: the design it describes when asked
(sections from top to bottom, colours, columns, alignment) and the differences it names
on a draft (a section missing, extra or of the wrong kind, a background or text colour,
columns, alignment, size). Each thing the human says is applied only with
``apply_probability``; it asks about the design first only with ``ask_probability``, and
drafts once or twice before ``I WANT TO ANSWER:`` with the last picture, written as a
skeleton page. Its failures are facts it never heard or did not apply: what better
questions and drafts fix.

The replies are read with the sentence forms of
:class:`~sweetrl_gym.simulators.VisualDiffSimulator`; anything else in a reply (another
human's words) changes nothing.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agents.base import Message
from sweetrl_gym.actions import ANSWER_MARKER
from sweetrl_gym.simulators.skeleton import (
    KIND_OF_NAME,
    SIZES,
    PageSketch,
    SectionSketch,
    default_size,
)

__all__ = ["FrontendCollaborator", "Update", "apply_update", "read_reply"]

_NAME = "(" + "|".join(re.escape(name) for name in KIND_OF_NAME) + ")"
# The words of colour_name: an optional shade, then a hue or a gray.
_COLOUR = (
    r"((?:very )?(?:light |dark )?"
    r"(?:white|black|gray|red|orange|yellow|green|teal|sky blue|blue|indigo|purple|pink))"
)
_SIZE_ORDER = tuple(SIZES)

_QUESTIONS = (
    "What should the page look like? Which sections, from top to bottom, and in what colours?",
    "Could you describe the design you have in mind: the sections, colours and layout?",
    "Which sections should the page have, and what colours and layout should they use?",
)
_DRAFTS = ("Here is a first draft:", "Here is a draft of the page:", "How does this look?")
_REVISIONS = ("Here is a revised draft:", "I changed the page:", "Is this closer?")

_SENTENCES = (
    # What it describes when asked (describe_design).
    ("structure", re.compile(r"From top to bottom, the page has (?P<list>[^.]+)\.")),
    (
        "colours",
        re.compile(rf"\b[Tt]he {_NAME} is {_COLOUR}(?: with {_COLOUR} text)?(?=, | and |\.)"),
    ),
    ("columns", re.compile(rf"\b[Tt]he {_NAME} shows (\d) items side by side")),
    ("centered", re.compile(r"\b[Tt]he text of the (?P<names>[^.]+?) is centered")),
    # What it says of a draft (page_differences).
    (
        "missing",
        re.compile(
            rf"Add an? {_NAME}(?: titled '[^']*')? (at the top|after the {_NAME}|at the bottom)"
            rf", with an? {_COLOUR} background(?:, with (\d) items side by side)?\."
        ),
    ),
    ("extra", re.compile(rf"Remove the {_NAME}; it is not part of my design\.")),
    (
        "replaced",
        re.compile(rf"Replace the {_NAME} with an? {_NAME} on an? {_COLOUR} background\."),
    ),
    (
        "background",
        re.compile(rf"The {_NAME} should have an? {_COLOUR}, not {_COLOUR} background\."),
    ),
    ("text", re.compile(rf"The text in the {_NAME} should be {_COLOUR}, not {_COLOUR}\.")),
    ("columns", re.compile(rf"The {_NAME} should show (\d) items side by side in a row")),
    ("single_column", re.compile(rf"The {_NAME} should stack its content in a single column")),
    (
        "align",
        re.compile(rf"The text in the {_NAME} should be (centered|left-aligned|right-aligned)\."),
    ),
    ("size", re.compile(rf"The {_NAME} should be (taller|shorter)\.")),
)


@dataclass(frozen=True)
class Update:
    """One thing the human said about the design, as a change to the picture.

    Attributes:
        what: ``"sections"`` (the whole list of kinds), ``"insert"``, ``"remove"``,
            ``"replace"``, or a :class:`SectionSketch` field to set (``"background"``,
            ``"text"``, ``"columns"``, ``"align"``, ``"size"``).
        kind: The section it concerns (``"insert"``: the new one; ``"replace"``: the one
            replaced).
        value: The new value (``"sections"``: a tuple of kinds; ``"insert"``: the kind to
            put it after, ``""`` for the top, ``None`` for the bottom; ``"replace"``: the
            new kind; ``"size"``: ``+1`` taller or ``-1`` shorter).
        background: A colour that comes with an inserted or replacing section.
        columns: Columns that come with an inserted section.

    """

    what: str
    kind: str = ""
    value: object = None
    background: str = ""
    columns: int = 1


def read_reply(reply: str) -> list[Update]:
    """Read a simulated human's reply into picture updates, in the order said.

    Args:
        reply: What the human said (the :class:`VisualDiffSimulator`'s sentence forms;
            anything else is ignored).

    Returns:
        The updates (empty if nothing was understood).

    """
    found: list[tuple[int, Update]] = []
    for what, pattern in _SENTENCES:
        for match in pattern.finditer(reply):
            found += [(match.start(), update) for update in _updates(what, match)]
    return [update for _, update in sorted(found, key=lambda item: item[0])]


def _updates(what: str, match: re.Match[str]) -> list[Update]:
    groups = match.groups()
    if what == "structure":
        names = [_without_article(n) for n in re.split(r", | and ", match.group("list"))]
        kinds = tuple(KIND_OF_NAME[n] for n in names if n in KIND_OF_NAME)
        return [Update("sections", value=kinds)] if kinds else []
    if what == "colours":
        name, background, text = groups
        out = [Update("background", KIND_OF_NAME[name], background)]
        return [*out, Update("text", KIND_OF_NAME[name], text)] if text else out
    if what == "centered":
        names = re.split(r", | and ", match.group("names"))
        return [Update("align", KIND_OF_NAME[n], "center") for n in names if n in KIND_OF_NAME]
    if what == "missing":
        name, where, after, background, columns = groups
        position = "" if where == "at the top" else (KIND_OF_NAME[after] if after else None)
        return [Update("insert", KIND_OF_NAME[name], position, background, int(columns or 1))]
    if what == "extra":
        return [Update("remove", KIND_OF_NAME[groups[0]])]
    if what == "replaced":
        old, new, background = groups
        return [Update("replace", KIND_OF_NAME[old], KIND_OF_NAME[new], background)]
    if what in ("background", "text"):
        return [Update(what, KIND_OF_NAME[groups[0]], groups[1])]
    if what == "columns":
        return [Update("columns", KIND_OF_NAME[groups[0]], int(groups[1]))]
    if what == "single_column":
        return [Update("columns", KIND_OF_NAME[groups[0]], 1)]
    if what == "align":
        align = {"centered": "center", "left-aligned": "left", "right-aligned": "right"}
        return [Update("align", KIND_OF_NAME[groups[0]], align[groups[1]])]
    return [Update("size", KIND_OF_NAME[groups[0]], 1 if groups[1] == "taller" else -1)]


def _without_article(name: str) -> str:
    return name.removeprefix("an ").removeprefix("a ")


def apply_update(sketch: PageSketch, update: Update) -> PageSketch:
    """Return the picture with one update applied (unchanged if it does not fit).

    Args:
        sketch: The current picture.
        update: What the human said (:func:`read_reply`).

    """
    sections = list(sketch.sections)
    kinds = [s.kind for s in sections]
    if update.what == "sections":
        known = {s.kind: s for s in sections}
        return PageSketch(tuple(known.get(k) or _new_section(k) for k in update.value))
    if update.what == "insert":
        if update.kind in kinds:
            return sketch
        section = _new_section(update.kind, update.background, update.columns)
        after = update.value
        index = 0 if after == "" else kinds.index(after) + 1 if after in kinds else len(kinds)
        sections.insert(index, section)
        return PageSketch(tuple(sections))
    if update.kind not in kinds:
        return sketch
    index = kinds.index(update.kind)
    section = sections[index]
    if update.what == "remove":
        del sections[index]
    elif update.what == "replace":
        sections[index] = _new_section(str(update.value), update.background or section.background)
    elif update.what == "size":
        step = _SIZE_ORDER.index(section.size) + int(update.value)
        sections[index] = replace(section, size=_SIZE_ORDER[min(max(step, 0), len(SIZES) - 1)])
    else:
        try:
            sections[index] = replace(section, **{update.what: update.value})
        except ValueError:  # a value the skeleton cannot draw (e.g. 7 columns)
            return sketch
    return PageSketch(tuple(sections))


def _new_section(kind: str, background: str = "white", columns: int = 1) -> SectionSketch:
    dark = background.startswith(("dark", "very dark", "black")) or background in (
        "blue",
        "green",
        "red",
        "purple",
        "pink",
        "orange",
    )
    text = "white" if dark else "dark gray"
    return SectionSketch(
        kind, background, text, columns=min(max(columns, 1), 6), size=default_size(kind)
    )


class FrontendCollaborator:
    """A scripted, imperfect designer that works from the human's words alone.

    Per episode (decided once, seeded by ``seed`` and the request) it asks about the
    design first with ``ask_probability`` (given two turns or more), then drafts once or
    twice (fewer if the turn limit leaves no room, none after a question in two turns) and
    answers with ``I WANT TO ANSWER:`` and its last picture.
    Every update the human's replies carry is applied with ``apply_probability``. The
    same dialogue always gets the same reply, whatever the batch.

    Args:
        ask_probability: Chance of asking about the design before the first draft.
        apply_probability: Chance of applying each thing the human says.
        max_turns: The environment's turn limit (the last turn is the answer).
        seed: Seed of its choices.

    Raises:
        ValueError: On a probability outside [0, 1] or ``max_turns`` below 1.

    """

    privileged = False
    own_system_prompt = True  # reads the conversation as the environment has it: no prompt

    def __init__(
        self,
        ask_probability: float = 0.5,
        apply_probability: float = 0.8,
        max_turns: int = 4,
        seed: int = 0,
    ):
        for name, value in (("ask", ask_probability), ("apply", apply_probability)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}_probability must be in [0, 1], got {value}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self.ask_probability = float(ask_probability)
        self.apply_probability = float(apply_probability)
        self.max_turns = int(max_turns)
        self.seed = int(seed)

    def act(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Ask, draft or answer in each conversation."""
        return [self._next(messages) for messages in batch]

    def picture(self, messages: Sequence[Message]) -> PageSketch:
        """Return the design it has in mind after the dialogue so far.

        Args:
            messages: The conversation (the human's request first).

        """
        rng, _ = self._plan(messages)
        sketch = PageSketch.default()
        for message in messages[1:]:
            if message.get("role") != "user":
                continue
            for update in read_reply(str(message.get("content", ""))):
                if rng.random() < self.apply_probability:
                    sketch = apply_update(sketch, update)
        return sketch

    def _plan(self, messages: Sequence[Message]) -> tuple[random.Random, tuple[bool, int]]:
        request = str(messages[0].get("content", "")) if messages else ""
        text = f"{self.seed}\0{request}"
        rng = random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))
        # With two turns it asks and answers, with no draft between.
        asks = rng.random() < self.ask_probability and self.max_turns >= 2
        drafts = min(rng.choice((1, 2)), max(0, self.max_turns - 1 - asks))
        return rng, (asks, drafts)

    def _next(self, messages: Sequence[Message]) -> str:
        rng, (asks, drafts) = self._plan(messages)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        choice = random.Random(rng.random() + turn)  # phrasing only: not the plan's draws
        if turn == 0 and asks:
            return choice.choice(_QUESTIONS)
        page = self.picture(messages).to_html()
        if turn < asks + drafts:
            said = _DRAFTS if turn == asks else _REVISIONS
            return f"{choice.choice(said)}\n{page}"
        return f"{ANSWER_MARKER}\n{page}"
