"""Preparing untrusted HTML for the renderer: offline Tailwind in place of its CDN tags."""

from __future__ import annotations

import re

__all__ = ["ASSET_ORIGIN", "TAILWIND_FUNCTION", "has_tailwind_cdn", "with_local_tailwind"]

ASSET_ORIGIN = "http://assets.sweetrl.invalid"
"""Requests to this origin are answered by the renderer from local files; no other
request leaves the browser. (``.invalid`` can never resolve to a real host.)"""

TAILWIND_FUNCTION = "__sweetrlTailwind"
"""The global function that runs a script build of Tailwind (the renderer defines it in
every document before the page's own scripts; see :class:`~sweetrl_gym.render.Renderer`)."""

# A <script src=...tailwind...></script> or a <link href=...tailwind...> tag, in one pattern
# so that one pass swaps the first and drops the rest.
_TAILWIND_TAG = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?[^\"'>\s]*tailwind[^>]*>\s*(?:</script\s*>)?"
    r"|<link\b[^>]*\bhref\s*=\s*[\"']?[^\"'>\s]*tailwind[^>]*>",
    re.IGNORECASE,
)


def has_tailwind_cdn(html: str) -> bool:
    """Return whether a page loads Tailwind by a ``<script>`` or ``<link>`` tag."""
    return bool(_TAILWIND_TAG.search(html))


def with_local_tailwind(html: str, local_file: str) -> str:
    """Replace a page's Tailwind CDN tags by one tag for the local Tailwind build.

    Pages without such a tag are returned unchanged, as a browser would show them.

    A script build (``.js``) becomes an inline call of :data:`TAILWIND_FUNCTION`, which
    runs the build where the page's tag stood; a stylesheet (``.css``) becomes a link to
    the build served from :data:`ASSET_ORIGIN`.

    Args:
        html: The page.
        local_file: Name of the local build (``.js`` → a script, ``.css`` → a stylesheet).

    Returns:
        The page with the first Tailwind tag swapped for the local one and any others
        removed.

    """
    if local_file.endswith(".css"):
        tag = f'<link rel="stylesheet" href="{ASSET_ORIGIN}/{local_file}">'
    else:
        tag = f"<script>{TAILWIND_FUNCTION}()</script>"
    placed = False

    def swap(_: re.Match[str]) -> str:
        nonlocal placed
        if placed:
            return ""
        placed = True
        return tag

    return _TAILWIND_TAG.sub(swap, html)
