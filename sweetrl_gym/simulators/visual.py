"""The offline simulated human of the Frontend task: it compares renders, not pixels alone.

Both pages (the agent's latest and the hidden target) are rendered in the real browser;
their top-level blocks (navigation, hero, grids, footer, ...) are aligned in page order and
compared: missing or extra sections, background and text colours, columns, alignment,
headings and sizes. The human names the most outstanding differences first, concretely
(what, where, how it should look), in at most three sentences. Without a page to look at
it describes the design it has in mind, leaning towards what the agent asked about.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweetrl_gym.actions import extract_html
from sweetrl_gym.render.colours import colour_distance, colour_name, parse_css_colour
from sweetrl_gym.render.layout import Block
from sweetrl_gym.simulators.base import SimulatorError
from sweetrl_gym.simulators.prompts import hidden_information

__all__ = [
    "Difference",
    "VisualDiffSimulator",
    "describe_design",
    "page_differences",
    "section_name",
]

_MAX_REPLY_CHARS = 1000
_SAME = "That looks just like what I had in mind."
_UNRENDERABLE = (
    "I could not see your page: it did not load in my browser. Please send a simpler page."
)
# What each kind of section is called; the bundled pages give the kind as the block's id.
_NAMES = {
    "navigation": "navigation bar",
    "hero": "hero banner",
    "features": "features grid",
    "pricing": "pricing section",
    "testimonials": "testimonials section",
    "stats": "statistics row",
    "cta": "call-to-action banner",
    "gallery": "gallery",
    "faq": "FAQ section",
    "contact": "contact form",
    "footer": "footer",
    "team": "team section",
    "about": "about section",
}
# Words that give away a section's kind on pages that do not name it (official data).
_KEYWORD_KINDS = (
    (("pricing", "price", "plan", "/mo", "per month"), "pricing"),
    (("testimonial", "review", "what our", "customers say", "said"), "testimonials"),
    (("faq", "frequently", "question"), "faq"),
    (("feature", "why choose", "what we offer", "services"), "features"),
    (("gallery", "portfolio", "our work", "projects"), "gallery"),
    (("stat", "numbers", "by the numbers"), "stats"),
    (("team", "meet"), "team"),
    (("about",), "about"),
    (("contact", "get in touch", "reach us"), "contact"),
    (("subscribe", "newsletter", "sign up", "get started", "join"), "cta"),
)
_KNOWN_KINDS = frozenset(_NAMES.values())
_ALIGN = {"start": "left", "left": "left", "end": "right", "right": "right", "center": "center"}


@dataclass(frozen=True)
class Difference:
    """One difference between the agent's page and the target.

    Attributes:
        importance: How much it matters (sorts differences; larger first).
        sentence: How the human says it.
        kind: ``missing``, ``extra``, ``replaced``, ``background``, ``text_colour``,
            ``columns``, ``alignment``, ``heading``, ``heading_size`` or ``height``.

    """

    importance: float
    sentence: str
    kind: str


def section_name(block: Block, index: int, count: int) -> str:
    """Name a block as a person would (``"navigation bar"``, ``"pricing section"``, ...)."""
    if block.id in _NAMES:  # the bundled pages name their sections by id
        return _NAMES[block.id]
    words = f"{block.id} {block.classes} {block.heading} {block.text[:200]}".lower()
    if block.tag == "nav" or (index == 0 and block.height < 140 and block.links >= 2):
        return _NAMES["navigation"]
    if block.tag == "footer" or (index == count - 1 and count > 2 and block.height < 200):
        return _NAMES["footer"]
    if block.inputs >= 2 or block.tag == "form":
        return _NAMES["contact"]
    if block.tag == "header" or (index <= 1 and block.heading_size >= 30):
        return _NAMES["hero"]
    for keys, kind in _KEYWORD_KINDS:
        if any(key in words for key in keys):
            return _NAMES[kind]
    if block.heading:
        return f"section titled '{_short(block.heading)}'"
    return "content section"


def _short(text: str, limit: int = 48) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _rgb(css: str) -> tuple[int, int, int]:
    return parse_css_colour(css) or (255, 255, 255)


def _align(block: Block) -> str:
    return _ALIGN.get(block.align, "left")


def _page_area(blocks: Sequence[Block]) -> float:
    return max(1.0, sum(b.width * b.height for b in blocks))


def _shade(target: tuple[int, int, int], other: tuple[int, int, int]) -> str:
    name, other_name = colour_name(target), colour_name(other)
    if name != other_name:
        return f"{name}, not {other_name}"
    lighter = colour_distance(target, (255, 255, 255)) < colour_distance(other, (255, 255, 255))
    return f"{'lighter' if lighter else 'darker'} {name}"


def page_differences(target: Sequence[Block], agent: Sequence[Block]) -> list[Difference]:
    """Compare two rendered pages block by block; most important difference first.

    Args:
        target: Blocks of the target page.
        agent: Blocks of the agent's page.

    Returns:
        The differences, sorted by importance (empty when the pages match).

    """
    names_t = [section_name(b, i, len(target)) for i, b in enumerate(target)]
    names_a = [section_name(b, i, len(agent)) for i, b in enumerate(agent)]
    area = _page_area(target)
    out: list[Difference] = []
    matcher = difflib.SequenceMatcher(a=names_t, b=names_a, autojunk=False)
    for op, t0, t1, a0, a1 in matcher.get_opcodes():
        if op == "equal" or (op == "replace" and t1 - t0 == a1 - a0):
            # Same kinds of section, or as many sections in their place: compare in place,
            # unless both are sections of known, different kinds.
            for i, j in zip(range(t0, t1), range(a0, a1)):
                if names_t[i] != names_a[j] and {names_t[i], names_a[j]} <= _KNOWN_KINDS:
                    out.append(_replaced(target[i], names_t[i], names_a[j], area))
                else:
                    out += _block_differences(target[i], agent[j], names_t[i], area)
            continue
        for i in range(t0, t1):
            out.append(_missing(target, names_t, i, area))
        for j in range(a0, a1):
            share = agent[j].width * agent[j].height / _page_area(agent)
            sentence = f"Remove the {names_a[j]}; it is not part of my design."
            out.append(Difference(0.4 + 2.0 * share, sentence, "extra"))
    return sorted(out, key=lambda d: -d.importance)


def _missing(target: Sequence[Block], names: Sequence[str], i: int, area: float) -> Difference:
    block = target[i]
    share = block.width * block.height / area
    where = "at the top" if i == 0 else f"after the {names[i - 1]}"
    if i == len(target) - 1 and i > 0:
        where = "at the bottom"
    background = colour_name(_rgb(block.background))
    title = f" titled '{_short(block.heading)}'" if block.heading else ""
    wide = block.columns > 1 and names[i] not in ("navigation bar", "footer")
    layout = f", with {block.columns} items side by side" if wide else ""
    name = names[i] if not names[i].startswith("section titled") else "section"
    sentence = f"Add a {name}{title} {where}, with a {background} background{layout}."
    return Difference(0.6 + 3.0 * share, sentence, "missing")


def _replaced(block: Block, name: str, instead: str, area: float) -> Difference:
    share = block.width * block.height / area
    background = colour_name(_rgb(block.background))
    sentence = f"Replace the {instead} with a {name} on a {background} background."
    return Difference(0.6 + 3.0 * share, sentence, "replaced")


def _block_differences(t: Block, a: Block, name: str, area: float) -> list[Difference]:
    share = t.width * t.height / area + 0.05
    found: list[Difference] = []
    bg_t, bg_a = _rgb(t.background), _rgb(a.background)
    delta = colour_distance(bg_t, bg_a)
    if delta > 12:
        found.append(
            Difference(
                3.0 * share * min(delta, 100) / 100,
                f"The {name} should have a {_shade(bg_t, bg_a)} background.",
                "background",
            )
        )
    fg_t, fg_a = _rgb(t.color), _rgb(a.color)
    if colour_distance(fg_t, fg_a) > 30:
        found.append(
            Difference(
                0.8 * share,
                f"The text in the {name} should be {colour_name(fg_t)}, not {colour_name(fg_a)}.",
                "text_colour",
            )
        )
    if t.columns != a.columns and max(t.columns, a.columns) > 1:
        layout = (
            f"show {t.columns} items side by side in a row"
            if t.columns > 1
            else "stack its content in a single column"
        )
        found.append(Difference(0.35, f"The {name} should {layout}, not {a.columns}.", "columns"))
    if _align(t) != _align(a):
        how = "centered" if _align(t) == "center" else f"{_align(t)}-aligned"
        found.append(Difference(0.2, f"The text in the {name} should be {how}.", "alignment"))
    if t.heading and _ratio(t.heading, a.heading) < 0.8:
        found.append(
            Difference(
                0.15, f"The {name} heading should read '{_short(t.heading, 80)}'.", "heading"
            )
        )
    elif (
        t.heading_size
        and a.heading_size
        and max(t.heading_size, a.heading_size) > 1.3 * min(t.heading_size, a.heading_size)
    ):
        size = "larger" if t.heading_size > a.heading_size else "smaller"
        found.append(Difference(0.12, f"The {name} heading should be much {size}.", "heading_size"))
    if a.height > 0 and max(t.height, a.height) > 1.6 * min(t.height, a.height):
        size = "taller" if t.height > a.height else "shorter"
        found.append(Difference(0.1 + share * 0.5, f"The {name} should be {size}.", "height"))
    return found


def _ratio(first: str, second: str) -> float:
    return difflib.SequenceMatcher(a=first.lower(), b=second.lower()).ratio()


def describe_design(target: Sequence[Block], question: str = "") -> str:
    """Describe the target page in at most three sentences, favouring what was asked.

    Args:
        target: Blocks of the target page.
        question: The agent's message (its words pick which facts come first).

    """
    if not target:
        return "I want a simple, mostly empty page."
    names = [section_name(b, i, len(target)) for i, b in enumerate(target)]
    listed = _join([f"a {n}" for n in names])
    structure = f"From top to bottom, the page has {listed}."
    by_area = sorted(range(len(target)), key=lambda i: -target[i].width * target[i].height)[:3]
    colours = _join([_colours_of(names[i], target[i]) for i in sorted(by_area)])
    palette = colours[0].upper() + colours[1:] + "."
    layouts = [
        f"the {names[i]} shows {b.columns} items side by side"
        for i, b in enumerate(target)
        if b.columns > 1 and names[i] not in ("navigation bar", "footer")
    ][:2]
    centered = [names[i] for i, b in enumerate(target) if _align(b) == "center"][:2]
    if centered:
        layouts.append(f"the text of the {_join(centered)} is centered")
    layout = (_join(layouts)[0].upper() + _join(layouts)[1:] + ".") if layouts else ""
    words = set(re.findall(r"[a-z]+", question.lower()))
    if words & {"color", "colour", "colors", "colours", "theme", "palette", "background"}:
        order = [palette, structure, layout]
    elif words & {"layout", "column", "columns", "grid", "align", "alignment", "centered"}:
        order = [layout, structure, palette]
    else:
        order = [structure, palette, layout]
    return _fit(" ".join(s for s in order if s))


def _colours_of(name: str, block: Block) -> str:
    background, text = colour_name(_rgb(block.background)), colour_name(_rgb(block.color))
    if background == text:
        return f"the {name} is {background}"
    return f"the {name} is {background} with {text} text"


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _fit(text: str) -> str:
    if len(text) <= _MAX_REPLY_CHARS:
        return text
    cut = text[:_MAX_REPLY_CHARS]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > 0 else cut


class VisualDiffSimulator:
    """Offline simulated human for ``ColBench-Frontend-v0``.

    It renders the agent's latest page and the task's target page (through the shared
    renderer, whose cache means each page renders once) and answers with up to
    ``max_differences`` of the most outstanding differences, most important first, in at
    most 1,000 characters. With no page in the agent's message it describes the design
    it has in mind. Deterministic: the same pages always get the same reply.

    Args:
        renderer: The renderer (default: :func:`sweetrl_gym.render.default_renderer`).
        max_differences: Sentences per reply (the official human gives two or three).

    """

    def __init__(self, renderer: Any = None, max_differences: int = 3):
        if not isinstance(max_differences, int) or not 1 <= max_differences <= 5:
            raise ValueError(f"max_differences must be an int in 1..5, got {max_differences!r}")
        self._renderer = renderer
        self.max_differences = max_differences
        self.name = f"visual-diff-v1(max_differences={max_differences})"

    def __repr__(self) -> str:
        return f"VisualDiffSimulator(max_differences={self.max_differences})"

    @property
    def renderer(self) -> Any:
        """The renderer in use (the shared one unless another was given)."""
        if self._renderer is None:
            from sweetrl_gym.render import default_renderer

            self._renderer = default_renderer()
        return self._renderer

    def reply(self, task: Any, messages: Sequence[Mapping[str, str]]) -> str:
        """Compare the agent's latest page with the target and say what differs most.

        Args:
            task: The task (its ``ground_truth`` is the target page's HTML).
            messages: The chat so far, ending with the agent's message.

        Raises:
            SimulatorError: If the target page itself cannot be rendered.
            ValueError: If ``messages`` holds no agent message.

        """
        from sweetrl_gym.render import RenderError

        agent_text = next(
            (str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "assistant"),
            None,
        )
        if agent_text is None:
            raise ValueError("messages must end with the agent's message")
        target_html = hidden_information(task)  # the target page's HTML
        try:
            target = self.renderer.render_page(target_html).blocks
        except RenderError as err:
            raise SimulatorError(f"the target page could not be rendered: {err}") from err
        page = extract_html(agent_text)
        if page is None:
            return describe_design(target, agent_text)
        try:
            agent = self.renderer.render_page(page).blocks
        except RenderError:
            return _UNRENDERABLE
        if not agent:
            return _fit("Your page looks empty to me. " + describe_design(target))
        differences = page_differences(target, agent)
        if not differences:
            return _SAME
        return _fit(" ".join(d.sentence for d in differences[: self.max_differences]))
