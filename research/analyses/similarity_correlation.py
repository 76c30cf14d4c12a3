"""How well the offline perceptual similarity agrees with the paper's CLIP score.

Reads top to bottom: take Frontend target pages (the bundled tasks; a few built-in pages
if they are not available) -> make perturbed variants of each (colours changed, a
section removed, sections reordered, columns collapsed, text changed, the page of
another task, a blank page, a black image as for a missing answer) -> render every page
in the real browser -> score each (target, variant) pair with
:func:`~sweetrl_gym.similarity.perceptual_similarity` and with CLIP -> print and save
the Pearson and Spearman correlations over all pairs and the mean score per variant
(``--output``; default: ``runs/analyses/similarity_correlation.json`` under the current
folder).

    python -m research.analyses.similarity_correlation --clip-model ~/models/clip-vit-base-patch32

CLIP weights are never downloaded: pass a local checkpoint directory.
``--perceptual-only`` prints the per-variant table without CLIP.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

RESULTS = Path("runs") / "analyses" / "similarity_correlation.json"
BLANK_PAGE = "<html><body></body></html>"
BLACK = "black image (missing answer)"

_COLOUR_CLASS = re.compile(
    r"\b(bg|text|border|from|to|via)-(red|orange|amber|yellow|lime|green|emerald|teal|cyan|"
    r"sky|blue|indigo|violet|purple|fuchsia|pink|rose)-(\d{2,3})\b"
)
_HUES = "red orange amber yellow lime green emerald teal cyan sky blue indigo violet purple "
_HUES += "fuchsia pink rose"
_HUE_LIST = _HUES.split()
_SECTION = re.compile(r"<section\b.*?</section\s*>", re.IGNORECASE | re.DOTALL)
_GRID_COLUMNS = re.compile(r"\bgrid-cols-([2-9])\b")
_TEXT = re.compile(r">([^<>]*[A-Za-z][^<>]*)<")


def perturb(html: str) -> dict[str, str]:
    """Return the perturbed variants of a page that differ from it, by name."""
    sections = _SECTION.findall(html)
    variants = {
        "colours changed": _COLOUR_CLASS.sub(_rotate_hue, html),
        "columns collapsed": _GRID_COLUMNS.sub("grid-cols-1", html),
        "text changed": _TEXT.sub(lambda m: ">" + _scramble(m.group(1)) + "<", html),
        "section removed": html.replace(sections[0], "", 1) if sections else html,
        "sections reordered": _reorder(html, sections),
        "blank page": BLANK_PAGE,
    }
    return {name: page for name, page in variants.items() if page != html}


def correlations(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float | int | None]:
    """Pearson and Spearman (rank, ties averaged) correlations of paired scores.

    Returns:
        ``{"pearson", "spearman", "n"}``; a correlation is ``None`` when a side is
        constant (undefined).

    Raises:
        ValueError: If the sequences differ in length, have fewer than 3 pairs, or hold
            a non-finite number.

    """
    x, y = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"need two equal-length sequences, got {x.shape} and {y.shape}")
    if len(x) < 3:
        raise ValueError(f"need at least 3 pairs, got {len(x)}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("scores must be finite")
    return {"pearson": _pearson(x, y), "spearman": _pearson(_ranks(x), _ranks(y)), "n": len(x)}


def variant_means(records: list[dict[str, Any]], key: str) -> dict[str, float]:
    """Mean of ``key`` per variant, variants in first-seen order."""
    groups: dict[str, list[float]] = {}
    for record in records:
        groups.setdefault(record["variant"], []).append(record[key])
    return {name: float(np.mean(values)) for name, values in groups.items()}


def _rotate_hue(match: re.Match[str]) -> str:
    prefix, hue, shade = match.groups()
    return f"{prefix}-{_HUE_LIST[(_HUE_LIST.index(hue) + 6) % len(_HUE_LIST)]}-{shade}"


def _scramble(text: str) -> str:
    # Same length and word shapes, other letters: what a different copy would look like.
    return re.sub(r"[A-Za-z]", lambda m: "e" if m.group(0).islower() else "E", text[::-1])


def _reorder(html: str, sections: list[str]) -> str:
    if len(sections) < 2:
        return html
    start = html.index(sections[0])
    end = html.index(sections[-1]) + len(sections[-1])
    middle = html[start:end]
    for i, section in enumerate(sections):  # placeholders keep identical sections apart
        middle = middle.replace(section, f"\0{i}\0", 1)
    for i, section in enumerate(reversed(sections)):
        middle = middle.replace(f"\0{i}\0", section, 1)
    return html[:start] + middle + html[end:]


def _ranks(values: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(values)


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    value = float(np.corrcoef(x, y)[0, 1])
    return value if math.isfinite(value) else None


def _targets(count: int) -> list[str]:
    try:
        from sweetrl_gym.tasks import load_frontend_tasks

        return [task.ground_truth for task in load_frontend_tasks("bundled", split="test")[:count]]
    except (ImportError, OSError, ValueError) as err:
        print(f"bundled frontend tasks unavailable ({err}); using built-in pages")
        return [_builtin_page(hue) for hue in ("blue", "emerald", "rose", "amber")][:count]


def _builtin_page(hue: str) -> str:
    cards = "".join(
        f'<div class="bg-{hue}-100 rounded-lg p-6"><h3 class="text-xl font-bold">Card {i}</h3>'
        f'<p class="text-gray-600">Short description of item {i}.</p></div>'
        for i in range(3)
    )
    return (
        '<html><head><script src="https://cdn.tailwindcss.com"></script></head>'
        '<body class="bg-white">'
        f'<nav class="bg-{hue}-900 text-white p-4 text-xl">Brand</nav>'
        f'<section class="bg-{hue}-500 text-white py-24 text-center">'
        '<h1 class="text-5xl font-bold">Welcome</h1><p class="text-xl">A tagline.</p></section>'
        f'<section class="py-16 px-8"><div class="grid grid-cols-3 gap-6">{cards}</div></section>'
        '<section class="bg-gray-100 py-16 text-center"><h2 class="text-3xl">Contact us</h2>'
        '</section><footer class="bg-gray-900 text-gray-400 p-6">© 2025</footer></body></html>'
    )


def collect_pairs(
    targets: list[str], max_pairs: int, render: Any
) -> list[tuple[int, str, Image.Image, Image.Image]]:
    """Render (task index, variant, target image, variant image) for up to ``max_pairs``."""
    from sweetrl_gym.render import RenderError

    pairs = []
    for index, target_html in enumerate(targets):
        try:
            target = render(target_html)
        except RenderError as err:
            print(f"task {index}: target does not render ({err}); skipped")
            continue
        variants = perturb(target_html)
        variants["another task's page"] = targets[(index + 1) % len(targets)]
        for name, html in variants.items():
            if len(pairs) >= max_pairs:
                return pairs
            try:
                image = render(html)
            except RenderError as err:
                print(f"task {index}, {name}: does not render ({err}); skipped")
                continue
            pairs.append((index, name, target, image))
        if len(pairs) < max_pairs:
            pairs.append((index, BLACK, target, Image.new("RGB", target.size, (0, 0, 0))))
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clip-model", help="local CLIP checkpoint directory (no download)")
    parser.add_argument("--pairs", type=int, default=200, help="(target, variant) pairs")
    parser.add_argument("--perceptual-only", action="store_true", help="no CLIP; no JSON")
    parser.add_argument("--output", type=Path, default=RESULTS, help="default: %(default)s")
    args = parser.parse_args(argv)
    if args.clip_model is None and not args.perceptual_only:
        print(
            "CLIP weights are needed: pass --clip-model DIR, a local copy of "
            "openai/clip-vit-base-patch32 saved with save_pretrained (nothing is "
            "downloaded), or --perceptual-only for the perceptual scores alone.",
            file=sys.stderr,
        )
        return 2
    if args.pairs < 3:
        parser.error("--pairs must be at least 3")

    from sweetrl_gym.render import render_html
    from sweetrl_gym.similarity import ClipSimilarity, perceptual_similarity

    clip = None if args.perceptual_only else ClipSimilarity(args.clip_model)
    variants_per_task = 8  # 6 perturbations, another task, black
    start = time.perf_counter()
    pairs = collect_pairs(
        _targets(-(-args.pairs // variants_per_task) + 1), args.pairs, render_html
    )
    render_s = time.perf_counter() - start
    records = []
    for index, name, target, image in pairs:
        record = {
            "task": index,
            "variant": name,
            "perceptual": perceptual_similarity(image, target),
        }
        if clip is not None:
            record["clip"] = clip(image, target)
        records.append(record)

    perceptual = variant_means(records, "perceptual")
    clip_means = variant_means(records, "clip") if clip is not None else {}
    print(f"{len(records)} pairs from {len({r['task'] for r in records})} pages")
    print(f"{'variant':30s} {'perceptual':>10s}" + (f" {'clip':>8s}" if clip else ""))
    for name, value in perceptual.items():
        print(f"{name:30s} {value:10.3f}" + (f" {clip_means[name]:8.3f}" if clip else ""))
    if clip is None:
        return 0
    result = correlations([r["perceptual"] for r in records], [r["clip"] for r in records])
    print(f"Pearson {result['pearson']}, Spearman {result['spearman']} (n={result['n']})")
    report = {
        "correlation": result,
        "mean_per_variant": {"perceptual": perceptual, "clip": clip_means},
        "clip_model": str(args.clip_model),
        "render_seconds": round(render_s, 1),
        "machine": platform.platform(),
        "pairs": records,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"saved {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
