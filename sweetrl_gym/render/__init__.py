"""Rendering HTML pages in a real headless browser, offline.

``render_html(html)`` returns the full-page screenshot of a page as a ``PIL.Image``,
rendered by the process-wide :class:`Renderer` (Debian's Chromium via Playwright, started
on first use and reused). Tailwind CDN tags are served from a local build; every other
request is blocked. Set-up: ``python -m sweetrl_gym.render.install``.
"""

from __future__ import annotations

from PIL import Image

from sweetrl_gym.render.assets import (
    TAILWIND_PACKAGE,
    AssetMissingError,
    BrowserNotFoundError,
    find_chromium,
    tailwind_path,
)
from sweetrl_gym.render.browser import (
    RenderedPage,
    Renderer,
    RenderError,
    RenderTimeout,
    default_renderer,
)
from sweetrl_gym.render.layout import Block

__all__ = [
    "TAILWIND_PACKAGE",
    "AssetMissingError",
    "Block",
    "BrowserNotFoundError",
    "RenderError",
    "RenderTimeout",
    "RenderedPage",
    "Renderer",
    "default_renderer",
    "find_chromium",
    "render_html",
    "render_page",
    "tailwind_path",
]


def render_html(html: str) -> Image.Image:
    """Render a page with the shared renderer and return its full-page screenshot.

    The screenshot is RGB, 1280 pixels wide and as tall as the page (at least the
    800-pixel viewport, at most 6,000 pixels).

    Raises:
        RenderTimeout: If the page does not load and paint within 5 seconds.
        RenderError: If it cannot be rendered (too long, crashes its tab).
        BrowserNotFoundError, AssetMissingError: If set-up has not been run.

    """
    return default_renderer().render(html)


def render_page(html: str) -> RenderedPage:
    """Render a page with the shared renderer: screenshot plus its top-level blocks."""
    return default_renderer().render_page(html)
