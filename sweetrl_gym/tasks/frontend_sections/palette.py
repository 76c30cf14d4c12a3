"""Colours: the Tailwind hues every version ships, and surfaces (background + text) built on them.

Only the eight hues of Tailwind v2's default palette are used (v3 and v4 keep them), with
shades 50-900, so a page renders the same whichever Tailwind build the renderer injects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = [
    "HUES",
    "SHADES",
    "TAILWIND_COLOUR_NAMES",
    "Surface",
    "Theme",
    "draw_theme",
]

HUES = ("gray", "red", "yellow", "green", "blue", "indigo", "purple", "pink")
SHADES = (50, 100, 200, 300, 400, 500, 600, 700, 800, 900)
# Every colour name any Tailwind version knows: descriptions must mention none of them.
TAILWIND_COLOUR_NAMES = (
    *HUES,
    *"slate zinc neutral stone orange amber lime emerald teal cyan sky violet fuchsia rose".split(),
    "white",
    "black",
)
_ACCENT_HUES = HUES[1:]  # gray is the neutral, never the brand colour


def _is_dark(hue: str, shade: int) -> bool:
    return shade >= 600 or (shade == 500 and hue not in ("yellow", "gray"))


@dataclass(frozen=True)
class Surface:
    """A background and the text colours that read well on it.

    Attributes:
        bg: Background class (``"bg-indigo-600"``, ``"bg-white"``).
        text: Main text colour class.
        muted: Secondary text colour class.
        dark: Whether the background is dark (light text on it).
        hue: The background's hue (``"white"`` for white).

    """

    bg: str
    text: str
    muted: str
    dark: bool
    hue: str

    @property
    def classes(self) -> str:
        """Background and text classes together."""
        return f"{self.bg} {self.text}"


def _surface(hue: str, shade: int | None, rng: random.Random) -> Surface:
    if shade is None:
        return Surface(
            "bg-white",
            rng.choice(("text-gray-900", "text-gray-800")),
            "text-gray-600",
            False,
            "white",
        )
    if _is_dark(hue, shade):
        text = rng.choice(("text-white", f"text-{hue}-50", "text-white"))
        muted = f"text-{hue}-{rng.choice((100, 200, 300))}" if hue != "gray" else "text-gray-300"
        return Surface(f"bg-{hue}-{shade}", text, muted, True, hue)
    text = rng.choice(("text-gray-900", f"text-{hue}-900", "text-gray-800"))
    muted = rng.choice(("text-gray-600", f"text-{hue}-700", "text-gray-700"))
    return Surface(f"bg-{hue}-{shade}", text, muted, False, hue)


@dataclass(frozen=True)
class Theme:
    """Page-wide style choices; each section draws its own surface from them.

    Attributes:
        primary: The brand hue.
        accent: A second hue for highlights.
        radius: Corner class for cards and blocks.
        pill: Whether buttons are fully rounded.
        button_pad: Button padding classes.
        shadow: Shadow class for cards (``""`` for flat cards).
        weight: Heading weight class.
        font: Body font family class.
        width: Content width class (``"max-w-5xl"``).

    """

    primary: str
    accent: str
    radius: str
    pill: bool
    button_pad: str
    shadow: str
    weight: str
    font: str
    width: str

    def light(self, rng: random.Random) -> Surface:
        """Draw a light section background: white, a pale gray or a pale brand tint."""
        hue, shade = rng.choice(
            (
                ("white", None),
                ("white", None),
                ("gray", 50),
                ("gray", 100),
                (self.primary, 50),
                (self.primary, 100),
                (self.accent, 50),
            )
        )
        return _surface(hue, shade, rng)

    def dark(self, rng: random.Random) -> Surface:
        """Draw a dark section background: a deep brand, accent or gray."""
        hue, shade = rng.choice(
            (
                (self.primary, 600),
                (self.primary, 700),
                (self.primary, 800),
                (self.primary, 900),
                (self.accent, 600),
                (self.accent, 700),
                ("gray", 800),
                ("gray", 900),
            )
        )
        return _surface(hue, shade, rng)

    def section(self, rng: random.Random, dark_chance: float = 0.3) -> Surface:
        """Draw a section background, dark with probability ``dark_chance``."""
        return self.dark(rng) if rng.random() < dark_chance else self.light(rng)

    def card(self, rng: random.Random, on: Surface) -> Surface:
        """Draw a card background that stands out from the section surface ``on``."""
        if on.dark:
            if rng.random() < 0.5:
                return _surface("white", None, rng)
            hue = on.hue if on.hue != "white" else "gray"
            shade = int(on.bg.rsplit("-", 1)[1])
            return _surface(hue, max(600, shade - 100) if shade > 600 else 800, rng)
        if on.hue == "white":
            return _surface(*rng.choice(((self.primary, 50), ("gray", 50), ("white", None))), rng)
        return _surface("white", None, rng)

    def button(self, rng: random.Random, on: Surface, solid: bool = True) -> str:
        """Classes of a button that reads on ``on``: colours, padding, corners, weight."""
        if on.dark:
            colours = rng.choice(
                (
                    "bg-white text-gray-900",
                    f"bg-{self.accent}-400 text-gray-900",
                    f"bg-white text-{on.hue if on.hue != 'white' else self.primary}-700",
                )
            )
            if not solid:
                colours = "border border-white text-white"
        else:
            hue = rng.choice((self.primary, self.primary, self.accent))
            colours = f"bg-{hue}-{rng.choice((500, 600, 700))} text-white"
            if not solid:
                colours = f"border border-{self.primary}-600 text-{self.primary}-700"
        radius = "rounded-full" if self.pill else self.radius
        return f"inline-block {colours} {self.button_pad} {radius} font-semibold"


def draw_theme(rng: random.Random) -> Theme:
    """Draw a page theme."""
    primary = rng.choice(_ACCENT_HUES)
    accent = rng.choice([h for h in _ACCENT_HUES if h != primary])
    return Theme(
        primary=primary,
        accent=accent,
        radius=rng.choice(
            ("rounded", "rounded-md", "rounded-lg", "rounded-xl", "rounded-2xl", "rounded-none")
        ),
        pill=rng.random() < 0.2,
        button_pad=rng.choice(("px-4 py-2", "px-6 py-3", "px-5 py-2", "px-8 py-3")),
        shadow=rng.choice(("", "shadow", "shadow-md", "shadow-lg")),
        weight=rng.choice(("font-bold", "font-extrabold", "font-semibold")),
        font=rng.choice(("font-sans", "font-sans", "font-serif", "font-mono")),
        width=rng.choice(("max-w-4xl", "max-w-5xl", "max-w-6xl")),
    )
