"""Visual similarity of page screenshots: the Frontend task's score.

* :func:`perceptual_similarity` — the offline default (no weights; see its module).
* :class:`ClipSimilarity` — the paper's score (CLIP image-embedding cosine), from a
  local checkpoint or a hub id.
* :func:`make_similarity` — what the environment calls with its ``similarity`` and
  ``clip_model`` arguments.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from PIL import Image

from sweetrl_gym.similarity.clip import ClipSimilarity
from sweetrl_gym.similarity.perceptual import (
    perceptual_components,
    perceptual_similarity,
    to_rgb,
)

__all__ = [
    "SIMILARITIES",
    "ClipSimilarity",
    "Similarity",
    "make_similarity",
    "perceptual_components",
    "perceptual_similarity",
    "to_rgb",
]

Similarity = Callable[[Image.Image, Image.Image], float]
"""A score of how alike two screenshots look (higher: more alike)."""

SIMILARITIES = ("perceptual", "clip")
"""The named similarities :func:`make_similarity` builds."""


def make_similarity(
    similarity: str | Similarity | None = None,
    clip_model: str | Path | None = None,
    *,
    device: str | None = None,
) -> Similarity:
    """Return the function that scores a screenshot against the target's.

    Args:
        similarity: ``"perceptual"`` (offline, no weights), ``"clip"`` (the paper's
            score; needs ``clip_model``), any callable ``(image, image) -> float``, or
            ``None``: ``"clip"`` when ``clip_model`` is given, else ``"perceptual"``.
        clip_model: A CLIP checkpoint: a local folder or a hub id (see :class:`ClipSimilarity`).
        device: Torch device for CLIP (default: CUDA when available).

    Raises:
        ValueError: If the name is unknown, ``"clip"`` comes without ``clip_model``, or
            ``clip_model`` comes with a similarity that would not use it.
        TypeError: If ``similarity`` is neither a name nor a callable.
        FileNotFoundError: If ``clip_model`` does not exist.
        ImportError: If scikit-image (the ``frontend`` extra) is missing for ``"perceptual"``.

    """
    if similarity is None:
        similarity = "clip" if clip_model is not None else "perceptual"
    if callable(similarity):
        if clip_model is not None:
            raise ValueError("clip_model is only used with similarity='clip', not a callable")
        return similarity
    if not isinstance(similarity, str):
        raise TypeError(
            f"similarity must be one of {SIMILARITIES} or a callable, "
            f"got {type(similarity).__name__}"
        )
    if similarity == "perceptual":
        if clip_model is not None:
            raise ValueError(
                "clip_model was given but similarity='perceptual' would ignore it; pass "
                "similarity='clip' (or leave it unset) to score with CLIP"
            )
        if importlib.util.find_spec("skimage") is None:
            raise ImportError(
                "the perceptual similarity needs scikit-image: pip install 'sweetrl-gym[frontend]'"
            )
        return perceptual_similarity
    if similarity == "clip":
        if clip_model is None:
            raise ValueError(
                "similarity='clip' needs clip_model: a local directory with a CLIP "
                "checkpoint (e.g. openai/clip-vit-base-patch32 saved with "
                "save_pretrained); no weights are downloaded. Use "
                "similarity='perceptual' to score offline without weights."
            )
        return ClipSimilarity(clip_model, device=device)
    raise ValueError(f"unknown similarity {similarity!r}; choose from {SIMILARITIES}")
