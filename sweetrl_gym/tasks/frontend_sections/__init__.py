"""Building blocks of the bundled frontend pages: HTML builder, palette, copy, sections."""

from sweetrl_gym.tasks.frontend_sections.palette import HUES, TAILWIND_COLOUR_NAMES
from sweetrl_gym.tasks.frontend_sections.sections import (
    RENDERERS,
    SECTION_KINDS,
    SECTION_LABELS,
    PageContext,
)
from sweetrl_gym.tasks.frontend_sections.vocab import BUSINESSES, Business

__all__ = [
    "BUSINESSES",
    "HUES",
    "RENDERERS",
    "SECTION_KINDS",
    "SECTION_LABELS",
    "TAILWIND_COLOUR_NAMES",
    "Business",
    "PageContext",
]
