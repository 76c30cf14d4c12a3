"""An offline visual similarity for web-page screenshots (no model weights needed).

The paper scores a Frontend episode by the cosine similarity of CLIP ViT-B/32 image
embeddings. CLIP weights cannot always be had (offline machines, CI), so the default
score is :func:`perceptual_similarity`, a pure function of the two screenshots built to
rank pages the way CLIP does — by overall colour scheme and layout, barely by the words
on the page — while being 1.0 only for pages that look the same. Step by step:

1. **Normalise.** Both images become RGB (transparency composited on white), are
   resized to :data:`THUMBNAIL_WIDTH` (160) pixels wide keeping their aspect ratio
   (box filter; at most :data:`MAX_THUMBNAIL_HEIGHT` rows, so time and memory are
   bounded), and the shorter one is padded at the bottom with white to the taller
   one's height: a full-page screenshot is a page whose canvas continues in white.
   A 1,280-pixel-wide screenshot is scaled 8:1, so text becomes grey lines and only
   layout, colour and big type remain — what CLIP sees, too.
2. **Blur and convert.** A Gaussian blur (σ = 1 thumbnail pixel) absorbs anti-aliasing,
   then pixels go to CIELAB, where Euclidean distance (ΔE, CIE76) tracks perceived
   colour difference.
3. **Weights.** Each image's background is its most frequent colour (Lab quantised to
   4 ΔE); pixels that are background in both images *and* of the same colour
   (ΔE < :data:`BACKGROUND_DELTA_E`) weigh :data:`BACKGROUND_WEIGHT` (0.1), all others
   1. Without this, a blank white page would score high against any page that is
   mostly white margin.
4. **Three terms**, each a weighted mean in [0, 1], each tolerant to shifts of up to
   :data:`SHIFT_TOLERANCE` thumbnail pixels (2, i.e. 16 px of a 1,280 px page: one
   element a little taller must not ruin everything below it):

   * *colour*: per pixel, ``1 - min(ΔE / 50, 1)`` where ΔE is the distance to the
     closest-coloured pixel of the other image within the shift window, averaged over
     both directions (ΔE 50 is roughly "a different colour": white vs mid grey);
   * *structure*: SSIM (Wang et al. 2004) of the grayscale thumbnails,
     ``skimage.metrics.structural_similarity`` with Gaussian weights (σ = 1.5),
     ``data_range=1``, as a per-pixel map; per pixel the best value over the shift
     window, averaged over both directions, clipped at 0;
   * *palette*: histogram intersection of the two weighted Lab colour histograms
     (8 × 16 × 16 bins, L in steps of 12.5, a and b in steps of 16; each pixel split
     between its 8 neighbouring bin centres, so the score moves continuously with the
     colours). It ignores where colours are: sections moved keep their palette.

5. **Score** = the mean of the three terms, clipped to [0, 1]; exactly 1.0 when the two
   thumbnails are equal.

Measured on synthetic 1,280 px pages (nav bar, hero, 3 x 2 grid of cards, footer;
``tests/test_similarity.py`` draws them): identical 1.00, text changed 0.98, page
shifted down 16 px 0.97, one section's colour changed 0.79, columns 3 -> 2 0.80,
sections reordered 0.61, blank white page 0.36, unrelated page 0.27, black 0.25. On
rendered bundled Frontend targets (the repository's analysis
``research/analyses/similarity_correlation.py``, ``--perceptual-only``): text changed
0.99, sections reordered 0.81, a section removed 0.68, grid columns collapsed 0.67,
colours changed 0.60, blank page 0.34, another task's page 0.34, black image 0.05. About
0.15 s a pair on one CPU core.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image

__all__ = [
    "BACKGROUND_DELTA_E",
    "BACKGROUND_WEIGHT",
    "MAX_THUMBNAIL_HEIGHT",
    "SHIFT_TOLERANCE",
    "THUMBNAIL_WIDTH",
    "perceptual_components",
    "perceptual_similarity",
    "to_rgb",
]

THUMBNAIL_WIDTH = 160
"""Width (pixels) both screenshots are resized to before comparing."""

MAX_THUMBNAIL_HEIGHT = 1024
"""Most thumbnail rows (an 8,192 px tall page at 1,280 px wide); taller pages are squeezed."""

SHIFT_TOLERANCE = 2
"""Thumbnail pixels an element may move without penalty (16 px of a 1,280 px page)."""

BACKGROUND_WEIGHT = 0.1
"""Weight of pixels that are the same background colour in both images."""

BACKGROUND_DELTA_E = 5.0
"""ΔE under which a pixel counts as its image's background colour, or as unchanged."""

_DELTA_E_ZERO = 50.0  # ΔE at which the colour term of a pixel reaches 0
_BLUR_SIGMA = 1.0
_SSIM_SIGMA = 1.5
_MIN_ROWS = 16  # SSIM's Gaussian window is 11 x 11
_BINS = np.array([8, 16, 16])
_BIN_ORIGIN = np.array([0.0, -128.0, -128.0])
_BIN_WIDTH = np.array([12.5, 16.0, 16.0])
_GRAY = np.array([0.299, 0.587, 0.114])


def to_rgb(image: Image.Image) -> Image.Image:
    """Return ``image`` as RGB, compositing any transparency on white.

    Args:
        image: A PIL image of any mode.

    Raises:
        TypeError: If ``image`` is not a PIL image.
        ValueError: If it has no pixels.

    """
    if not isinstance(image, Image.Image):
        raise TypeError(f"expected a PIL.Image.Image, got {type(image).__name__}")
    if image.width == 0 or image.height == 0:
        raise ValueError(f"image has no pixels (size {image.width}x{image.height})")
    if image.mode == "RGB":
        return image
    transparent = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (
        image.mode == "P" and "transparency" in image.info
    )
    if transparent:
        rgba = image.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(canvas, rgba).convert("RGB")
    return image.convert("RGB")


def perceptual_similarity(a: Image.Image, b: Image.Image) -> float:
    """Return how alike two page screenshots look, in [0, 1] (1.0: the same).

    Symmetric, deterministic, and independent of the images' sizes and modes. See the
    module docstring for the exact definition.

    Args:
        a: One screenshot (any size and mode).
        b: The other.

    Raises:
        TypeError: If an argument is not a PIL image.
        ValueError: If an image has no pixels.

    """
    return perceptual_components(a, b)["similarity"]


def perceptual_components(a: Image.Image, b: Image.Image) -> dict[str, float]:
    """Return :func:`perceptual_similarity` with its three terms.

    Args:
        a: One screenshot.
        b: The other.

    Returns:
        ``{"similarity", "colour", "structure", "palette"}``, each in [0, 1].

    Raises:
        TypeError: If an argument is not a PIL image.
        ValueError: If an image has no pixels.

    """
    from scipy import ndimage  # scipy/skimage load in ~0.3 s: only when scoring
    from skimage.color import rgb2lab

    ta, tb = _thumbnail(a), _thumbnail(b)
    rows = max(ta.shape[0], tb.shape[0], _MIN_ROWS)
    ta, tb = _pad_white(ta, rows), _pad_white(tb, rows)
    if np.array_equal(ta, tb):
        return {"similarity": 1.0, "colour": 1.0, "structure": 1.0, "palette": 1.0}
    fa, fb = ta / 255.0, tb / 255.0
    lab_a = rgb2lab(ndimage.gaussian_filter(fa, sigma=(_BLUR_SIGMA, _BLUR_SIGMA, 0)))
    lab_b = rgb2lab(ndimage.gaussian_filter(fb, sigma=(_BLUR_SIGMA, _BLUR_SIGMA, 0)))
    weights = _weights(lab_a, lab_b)
    total = weights.sum()

    delta_e = 0.5 * (_closest_colour(lab_a, lab_b) + _closest_colour(lab_b, lab_a))
    colour = float((np.clip(1.0 - delta_e / _DELTA_E_ZERO, 0.0, 1.0) * weights).sum() / total)
    gray_a, gray_b = fa @ _GRAY, fb @ _GRAY
    ssim_map = 0.5 * (_best_ssim(gray_a, gray_b) + _best_ssim(gray_b, gray_a))
    structure = float((np.clip(ssim_map, 0.0, 1.0) * weights).sum() / total)
    palette = float(np.minimum(_histogram(lab_a, weights), _histogram(lab_b, weights)).sum())

    terms = [min(max(x, 0.0), 1.0) for x in (colour, structure, palette)]
    return {
        "similarity": min(max(sum(terms) / 3.0, 0.0), 1.0),
        "colour": terms[0],
        "structure": terms[1],
        "palette": terms[2],
    }


def _thumbnail(image: Any) -> np.ndarray:
    rgb = to_rgb(image)
    rows = round(rgb.height * THUMBNAIL_WIDTH / rgb.width)
    rows = min(max(rows, 1), MAX_THUMBNAIL_HEIGHT)
    # reducing_gap: shrink huge screenshots by an integer factor first (fast, same result
    # up to rounding), then box-filter to the exact size.
    small = rgb.resize((THUMBNAIL_WIDTH, rows), Image.Resampling.BOX, reducing_gap=3.0)
    return np.asarray(small, dtype=np.float64)


def _pad_white(pixels: np.ndarray, rows: int) -> np.ndarray:
    if pixels.shape[0] == rows:
        return pixels
    padded = np.full((rows, *pixels.shape[1:]), 255.0)
    padded[: pixels.shape[0]] = pixels
    return padded


def _background_mask(lab: np.ndarray) -> np.ndarray:
    codes = np.round(lab.reshape(-1, 3) / 4.0).astype(np.int32)
    values, counts = np.unique(codes, axis=0, return_counts=True)
    dominant = values[counts.argmax()] * 4.0
    return np.linalg.norm(lab - dominant, axis=-1) < BACKGROUND_DELTA_E


def _weights(lab_a: np.ndarray, lab_b: np.ndarray) -> np.ndarray:
    unchanged = np.linalg.norm(lab_a - lab_b, axis=-1) < BACKGROUND_DELTA_E
    shared = _background_mask(lab_a) & _background_mask(lab_b) & unchanged
    return np.where(shared, BACKGROUND_WEIGHT, 1.0)


def _shifts() -> list[tuple[int, int]]:
    r = SHIFT_TOLERANCE
    return [(dy, dx) for dy in range(-r, r + 1) for dx in range(-r, r + 1)]


def _shifted_views(x: np.ndarray) -> list[np.ndarray]:
    """``x`` moved by every shift in the window, edges replicated."""
    r = SHIFT_TOLERANCE
    pad = ((r, r), (r, r)) + ((0, 0),) * (x.ndim - 2)
    padded = np.pad(x, pad, mode="edge")
    rows, cols = x.shape[:2]
    return [padded[r + dy : r + dy + rows, r + dx : r + dx + cols] for dy, dx in _shifts()]


def _closest_colour(lab_a: np.ndarray, lab_b: np.ndarray) -> np.ndarray:
    """Per pixel of ``a``: ΔE to the closest colour of ``b`` within the shift window."""
    best = np.full(lab_a.shape[:2], np.inf)
    for view in _shifted_views(lab_b):
        np.minimum(best, np.linalg.norm(lab_a - view, axis=-1), out=best)
    return best


def _best_ssim(gray_a: np.ndarray, gray_b: np.ndarray) -> np.ndarray:
    """Per pixel of ``a``: the best SSIM against ``b`` moved within the shift window."""
    from skimage.metrics import structural_similarity

    best = np.full(gray_a.shape, -1.0)
    for view in _shifted_views(gray_b):
        _, ssim_map = structural_similarity(
            gray_a,
            np.ascontiguousarray(view),
            data_range=1.0,
            gaussian_weights=True,
            sigma=_SSIM_SIGMA,
            use_sample_covariance=False,
            full=True,
        )
        np.maximum(best, ssim_map, out=best)
    return best


def _histogram(lab: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted Lab histogram, each pixel split linearly between neighbouring bins."""
    coords = (lab.reshape(-1, 3) - _BIN_ORIGIN) / _BIN_WIDTH - 0.5
    coords = np.clip(coords, 0.0, _BINS - 1.0)
    low = np.minimum(np.floor(coords).astype(np.int64), _BINS - 2)
    frac = coords - low
    flat_weights = weights.ravel()
    histogram = np.zeros(int(np.prod(_BINS)))
    for corner in np.ndindex(2, 2, 2):
        offset = np.array(corner)
        share = np.prod(np.where(offset == 1, frac, 1.0 - frac), axis=1) * flat_weights
        index = np.ravel_multi_index((low + offset).T, _BINS)
        histogram += np.bincount(index, weights=share, minlength=histogram.size)
    return histogram / histogram.sum()
