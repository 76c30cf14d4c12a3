"""Renderer throughput: pages rendered per second, against a fresh browser per page.

Reads top to bottom: take the target pages of the first N bundled frontend test tasks ->
render each (a) in a fresh Chromium started and closed for that page (what a script that
calls Playwright per screenshot does), (b) in one reused renderer, one page at a time,
and (c) in one reused renderer with a pool of pages, all at once. All three use the same
rendering code (same Tailwind, viewport and limits) and must produce the same pixels.

    python -m benchmarks.speed.render_speed --pages 30
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.machine import machine_summary
from benchmarks.speed.output import run_from_command_line, write_result
from sweetrl_gym.render import Renderer
from sweetrl_gym.tasks import load_frontend_tasks


def fresh_browser_renders(pages: list[str]) -> tuple[list[np.ndarray], float]:
    """Start a browser for every page; return the screenshots and the seconds taken."""
    images = []
    start = time.perf_counter()
    for html in pages:
        with Renderer(pages=1, cache_size=0) as renderer:
            images.append(np.asarray(renderer.render(html)))
    return images, time.perf_counter() - start


def reused_renders(pages: list[str], pool: int) -> tuple[list[np.ndarray], float]:
    """Render with one warm renderer; ``pool`` > 1 renders a batch concurrently."""
    with Renderer(pages=pool, cache_size=0) as renderer:
        renderer.render("<html><body>warm-up</body></html>")  # start outside the timing
        start = time.perf_counter()
        if pool == 1:
            images = [np.asarray(renderer.render(html)) for html in pages]
        else:
            images = [np.asarray(page.image) for page in renderer.render_many(pages)]
        return images, time.perf_counter() - start


def run(*, pages: int = 30, pool: int = 2, out: Path | None = None) -> dict[str, Any]:
    """Render the first ``pages`` bundled test pages three ways; return the rates.

    Args:
        pages: How many bundled frontend test pages (their targets) to render.
        pool: Pages rendering at once in the pooled renderer (way (c)).
        out: Also write the result to this JSON file (its folders made as needed).

    Returns:
        The machine, the number of pages and their mean height, the renders/s and
        seconds per render of each way, the speedups over a fresh browser, and whether
        all three ways produced the same pixels.

    Raises:
        ValueError: If ``pages`` or ``pool`` is below 1.
        BrowserNotFoundError: If no Chromium is installed for the renderer.
        AssetMissingError: If the renderer's Tailwind file is missing.

    """
    if pages < 1 or pool < 1:
        raise ValueError(f"pages and pool must be >= 1, got pages={pages}, pool={pool}")
    targets = [task.ground_truth for task in load_frontend_tasks("bundled", split="test")]
    targets = targets[:pages]
    fresh, fresh_s = fresh_browser_renders(targets)
    sequential, sequential_s = reused_renders(targets, pool=1)
    pooled, pooled_s = reused_renders(targets, pool=pool)

    n = len(targets)
    result = {
        "machine": machine_summary(),
        "pages": n,
        "mean_height_px": round(float(np.mean([image.shape[0] for image in sequential])), 1),
        "renders_per_s": {
            "fresh_browser_per_page": round(n / fresh_s, 2),
            "reused_sequential": round(n / sequential_s, 2),
            f"reused_pool_{pool}": round(n / pooled_s, 2),
        },
        "seconds_per_render": {
            "fresh_browser_per_page": round(fresh_s / n, 3),
            "reused_sequential": round(sequential_s / n, 3),
            f"reused_pool_{pool}": round(pooled_s / n, 3),
        },
        "speedup_vs_fresh_browser": {
            "sequential": round(fresh_s / sequential_s, 2),
            f"pool_{pool}": round(fresh_s / pooled_s, 2),
        },
        "renders_agree": all(
            a.shape == b.shape == c.shape and np.array_equal(a, b) and np.array_equal(a, c)
            for a, b, c in zip(fresh, sequential, pooled)
        ),
    }
    return write_result(result, out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark from the command line; prints (and writes) and returns the result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=30, help="bundled test pages to render")
    parser.add_argument("--pool", type=int, default=2, help="pages rendering at once in (c)")
    parser.add_argument("--out", type=Path, help="also write the result to this JSON file")
    return run_from_command_line(parser, argv, run)


if __name__ == "__main__":
    main()
