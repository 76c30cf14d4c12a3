"""The Frontend report's picture panel: the target and each method's final page, side by side.

People would rather look than read: for the first few held-out tasks, one row each, the
target page, the baseline's final page and the methods' final pages, rendered in the real
browser as the environment scored them (a missing or unrenderable page is black, as in
the score), each labelled with its similarity.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sweetrl_gym.actions import extract_html
from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["PANEL", "write_page_panel"]

PANEL = "pages.png"
"""The panel's file name in a comparison's folder."""

_TILE = (320, 480)  # width, height of one page's thumbnail (its top, as a visitor sees it)
_LABEL = 22  # pixels above each tile for its label


def write_page_panel(
    out: str | Path,
    methods: Sequence[str],
    labels: Sequence[str],
    *,
    tasks: int = 4,
    renderer: Any = None,
) -> str | None:
    """Draw ``pages.png``: per task, its target, then each method's final page.

    Args:
        out: A comparison's folder (its ``eval/<method>.jsonl`` episodes are read).
        methods: The methods to show, in column order (those not evaluated are left out).
        labels: Their names in the panel.
        tasks: Rows: the first tasks (in the evaluation's order) that every shown method
            played.
        renderer: A :class:`~sweetrl_gym.render.Renderer` (default: the shared one).

    Returns:
        The file name written, or ``None`` when no method has episodes.

    """
    from PIL import Image, ImageDraw

    out = Path(out)
    columns = []
    for name, label in zip(methods, labels):
        path = out / "eval" / f"{name}.jsonl"
        if path.exists():
            columns.append((label, {t.task_id: t for t in TrajectoryBuffer.load(path)}))
    if not columns:
        return None
    shared = [task for task in columns[0][1] if all(task in c for _, c in columns)][:tasks]
    if not shared:
        return None
    if renderer is None:
        from sweetrl_gym.render import default_renderer

        renderer = default_renderer()
    width, height = _TILE
    panel = Image.new("RGB", (width * (1 + len(columns)), (height + _LABEL) * len(shared)), "white")
    draw = ImageDraw.Draw(panel)
    for row, task in enumerate(shared):
        top = row * (height + _LABEL)
        first = columns[0][1][task]
        pages = [("target", first.reference.get("ground_truth"))]
        for label, episodes in columns:
            episode = episodes[task]
            pages.append((f"{label}: {episode.reward:.3f}", extract_html(episode.answer or "")))
        for column, (caption, html) in enumerate(pages):
            left = column * width
            draw.text((left + 4, top + 4), caption[:48], fill="black")
            panel.paste(_tile(renderer, html), (left, top + _LABEL))
    write_atomically(out / PANEL, lambda path: panel.save(path, format="PNG"))
    return PANEL


def _tile(renderer: Any, html: str | None) -> Any:
    """Return the page's top as a thumbnail: black when there is no page or it fails to render."""
    from PIL import Image

    from sweetrl_gym.render import RenderError

    width, height = _TILE
    if html is None:
        return Image.new("RGB", _TILE, "black")
    try:
        image = renderer.render_page(html).image
    except RenderError:
        return Image.new("RGB", _TILE, "black")
    scale = width / image.width
    shown = image.crop((0, 0, image.width, min(image.height, round(height / scale))))
    tile = Image.new("RGB", _TILE, "white")
    tile.paste(shown.resize((width, max(1, round(shown.height * scale)))), (0, 0))
    return tile
