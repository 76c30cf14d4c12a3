"""Skeleton pages: the compact Frontend pages a small policy can write.

A bundled target page is 1,000-12,000 characters (a 5-section page is ~1,300-2,000
tokens), beyond what a 135M model can write. A skeleton page draws each section of a
design as one element: its kind (as the element's id, which the simulated human reads),
its background and text colours as Tailwind classes, its alignment, its size (a minimum
height), a heading, and for a grid ``N`` empty cards side by side. What a skeleton holds
is exactly what the offline simulated human talks about (sections, colours, columns,
alignment, sizes; :mod:`sweetrl_gym.simulators.visual`), so a collaborator that keeps a
:class:`PageSketch` from the human's replies can write it back as a page.

Colours are the words the human uses (``"dark blue"``, ``"very light gray"``,
:func:`sweetrl_gym.render.colours.colour_name`); each maps to one Tailwind class whose
rendered colour the human names with that word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sweetrl_gym.render.colours import colour_name, parse_css_colour
from sweetrl_gym.render.layout import Block
from sweetrl_gym.simulators.visual import section_name
from sweetrl_gym.tasks.frontend_sections.sections import SECTION_KINDS

__all__ = [
    "ALIGNMENTS",
    "KIND_OF_NAME",
    "SIZES",
    "PageSketch",
    "SectionSketch",
    "colour_class",
    "default_size",
    "size_of",
]

ALIGNMENTS = ("left", "center", "right")
"""Text alignments a section can have."""

SIZES = {"short": 20, "medium": 60, "tall": 100, "very tall": 160}
"""Size words and the minimum height each gives a section, in Tailwind units (4 px)."""

# The human's colour words (colour_name) and the Tailwind colour whose render it names so.
# Measured by rendering every class of the bundled pages' palette (8 hues x 10 shades,
# white, black) and naming its computed colour; the middle shade of each name.
_COLOUR_CLASSES = {
    "white": "white",
    "very light gray": "gray-100",
    "light gray": "gray-300",
    "gray": "gray-500",
    "dark gray": "gray-700",
    "black": "gray-900",
    "very light red": "red-200",
    "light red": "red-300",
    "red": "red-500",
    "dark red": "red-800",
    "very dark red": "red-900",
    "very light yellow": "yellow-200",
    "light yellow": "yellow-500",
    "orange": "yellow-700",
    "dark orange": "yellow-900",
    "very light green": "green-200",
    "light green": "green-500",
    "green": "green-700",
    "dark green": "green-900",
    "very light sky blue": "blue-200",
    "light sky blue": "blue-300",
    "sky blue": "blue-400",
    "blue": "blue-600",
    "dark blue": "blue-800",
    "very dark blue": "indigo-900",
    "very light blue": "indigo-100",
    "light blue": "indigo-300",
    "dark indigo": "indigo-700",
    "very dark indigo": "indigo-800",
    "very light purple": "purple-200",
    "light purple": "purple-300",
    "purple": "purple-500",
    "dark purple": "purple-700",
    "very dark purple": "purple-900",
    "very light pink": "pink-200",
    "light pink": "pink-300",
    "pink": "pink-500",
    "dark pink": "pink-800",
    "very dark pink": "pink-900",
}
# For words the palette never produced (pages from elsewhere): the nearest hue and shade.
_HUE_CLASSES = {
    "gray": "gray",
    "red": "red",
    "orange": "yellow",
    "yellow": "yellow",
    "green": "green",
    "teal": "green",
    "sky blue": "blue",
    "blue": "blue",
    "indigo": "indigo",
    "purple": "purple",
    "pink": "pink",
}
_SHADE_WORDS = (("very light ", 100), ("light ", 300), ("very dark ", 900), ("dark ", 700))

# Elements and headings per kind; the bundled pages use the same ids.
_TAGS = {"navigation": "nav", "hero": "header", "footer": "footer"}
KIND_OF_NAME = {
    "navigation bar": "navigation",
    "hero banner": "hero",
    "features grid": "features",
    "pricing section": "pricing",
    "testimonials section": "testimonials",
    "statistics row": "stats",
    "call-to-action banner": "cta",
    "gallery": "gallery",
    "FAQ section": "faq",
    "contact form": "contact",
    "footer": "footer",
}
"""The simulated human's name of each bundled section kind, and the kind."""
_HEADINGS = {
    "navigation": "Home",
    "hero": "Welcome",
    "features": "Features",
    "pricing": "Pricing",
    "testimonials": "Testimonials",
    "stats": "Our numbers",
    "cta": "Get started",
    "gallery": "Gallery",
    "faq": "FAQ",
    "contact": "Contact us",
    "footer": "Contact",
}
_LINK_ROWS = ("navigation", "footer")  # their items are links in a row, not cards


def colour_class(name: str, prefix: str) -> str:
    """Return the Tailwind class for a colour word (``colour_class("dark blue", "bg")``).

    Args:
        name: A colour as the simulated human names it (``"very light gray"``).
        prefix: ``"bg"`` or ``"text"``.

    Returns:
        E.g. ``"bg-blue-800"``; an unknown word gets its nearest hue and shade, and a word
        with no known hue gray.

    """
    name = " ".join(str(name).lower().split())
    colour = _COLOUR_CLASSES.get(name)
    if colour is None:
        shade, hue = 500, name
        for word, number in _SHADE_WORDS:
            if name.startswith(word):
                shade, hue = number, name[len(word) :]
                break
        colour = f"{_HUE_CLASSES.get(hue, 'gray')}-{shade}"
    return f"{prefix}-{colour}"


def default_size(kind: str) -> str:
    """Return the size a section of ``kind`` gets when nothing was said of its size."""
    return {"navigation": "short", "footer": "short", "hero": "tall"}.get(kind, "medium")


def size_of(height: float) -> str:
    """Return the size word whose minimum height is nearest ``height`` (CSS pixels)."""
    return min(SIZES, key=lambda word: abs(SIZES[word] * 4 - height))


@dataclass(frozen=True)
class SectionSketch:
    """One section of a design, as the simulated human describes it.

    Attributes:
        kind: One of the bundled section kinds (``"navigation"``, ``"hero"``, ...).
        background: Background colour word (``"dark blue"``).
        text: Text colour word.
        columns: Cards side by side (1: none).
        align: ``"left"``, ``"center"`` or ``"right"``.
        size: A key of :data:`SIZES`.

    """

    kind: str
    background: str = "white"
    text: str = "dark gray"
    columns: int = 1
    align: str = "left"
    size: str = "medium"

    def __post_init__(self) -> None:
        if self.kind not in SECTION_KINDS:
            raise ValueError(f"kind must be one of {SECTION_KINDS}, got {self.kind!r}")
        if self.align not in ALIGNMENTS:
            raise ValueError(f"align must be one of {ALIGNMENTS}, got {self.align!r}")
        if self.size not in SIZES:
            raise ValueError(f"size must be one of {tuple(SIZES)}, got {self.size!r}")
        if not isinstance(self.columns, int) or not 1 <= self.columns <= 6:
            raise ValueError(f"columns must be an int in 1..6, got {self.columns!r}")

    def to_html(self) -> str:
        """Return the section as one element (about 40-80 tokens)."""
        tag = _TAGS.get(self.kind, "section")
        align = "" if self.align == "left" else f" text-{self.align}"
        classes = (
            f"{colour_class(self.background, 'bg')} {colour_class(self.text, 'text')}{align} "
            f"min-h-{SIZES[self.size]} p-8"
        )
        level, type_size = ("h1", "text-5xl") if self.kind == "hero" else ("h2", "text-2xl")
        inner = f'<{level} class="{type_size}">{_HEADINGS[self.kind]}</{level}>'
        if self.columns > 1 and self.kind in _LINK_ROWS:
            inner += f'<div class="flex gap-8">{"<a>Link</a>" * self.columns}</div>'
        elif self.columns > 1:
            cards = '<div class="h-32 border"></div>' * self.columns
            inner += f'<div class="grid grid-cols-{self.columns} gap-6">{cards}</div>'
        return f'<{tag} id="{self.kind}" class="{classes}">{inner}</{tag}>'


@dataclass(frozen=True)
class PageSketch:
    """A design: its sections from top to bottom.

    Attributes:
        sections: The sections in page order.

    """

    sections: tuple[SectionSketch, ...]

    @classmethod
    def default(cls) -> PageSketch:
        """Return the page a collaborator writes before it knows anything of the design."""
        return cls(
            (
                SectionSketch("navigation", "white", "dark gray", size="short"),
                SectionSketch("hero", "very light gray", "dark gray", align="center", size="tall"),
                SectionSketch("features", "white", "dark gray", columns=3),
                SectionSketch("footer", "dark gray", "white", size="short"),
            )
        )

    @classmethod
    def from_blocks(cls, blocks: Sequence[Block]) -> PageSketch:
        """Read a rendered page's design: everything the simulated human could tell.

        Each top-level block becomes a section: its kind as the human names it (blocks
        the human does not name by kind become a features section), the words for its
        background and text colours, its columns (at most 6), alignment and size.

        Args:
            blocks: A rendered page's blocks (:attr:`RenderedPage.blocks`).

        """
        sections = []
        for i, block in enumerate(blocks):
            kind = KIND_OF_NAME.get(section_name(block, i, len(blocks)), "features")
            background = parse_css_colour(block.background) or (255, 255, 255)
            text = parse_css_colour(block.color) or (0, 0, 0)
            align = {"center": "center", "right": "right", "end": "right"}.get(block.align, "left")
            sections.append(
                SectionSketch(
                    kind,
                    colour_name(background),
                    colour_name(text),
                    columns=max(1, min(int(block.columns), 6)),
                    align=align,
                    size=size_of(block.height),
                )
            )
        return cls(tuple(sections))

    def to_html(self) -> str:
        """Return the page: Tailwind from its usual CDN tag (the renderer serves it offline)."""
        body = "".join(section.to_html() for section in self.sections)
        return (
            '<html><head><script src="https://cdn.tailwindcss.com"></script></head>'
            f"<body>{body}</body></html>"
        )

    def with_default_sizes(self) -> PageSketch:
        """Return the same design with each section its kind's usual size (sizes unknown)."""
        return PageSketch(tuple(replace(s, size=default_size(s.kind)) for s in self.sections))
