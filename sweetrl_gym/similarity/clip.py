"""The paper's Frontend score: cosine similarity of CLIP image embeddings.

The official scorer embeds the final page's screenshot and the target's with CLIP
ViT-B/32 (``openai/clip-vit-base-patch32``) and takes the cosine of the two image
embeddings. :class:`ClipSimilarity` does the same with any CLIP checkpoint: a local
directory (``save_pretrained`` layout), or a hub id fetched once into the Hugging Face
cache (``HF_HUB_OFFLINE=1``: the cache only), as ``from_pretrained`` reads it. torch and
transformers are imported when the first instance is built, never at ``import sweetrl_gym``.

The images go through the checkpoint's ``CLIPImageProcessor``: resize the shortest side
to 224, centre-crop 224 x 224. For a tall full-page screenshot CLIP thus sees a square
from the middle of the page, as in the official scorer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from sweetrl_gym.similarity.perceptual import to_rgb

__all__ = ["ClipSimilarity"]

logger = logging.getLogger(__name__)

_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_WEIGHT_FILES += ("pytorch_model.bin.index.json",)
# Larger screenshots are shrunk before preprocessing (keeps memory bounded; CLIP looks at
# a 224 x 224 crop, so 32 megapixels leave the crop's content unchanged).
_MAX_PIXELS = 32_000_000


class ClipSimilarity:
    """Cosine similarity of CLIP image embeddings, from a local checkpoint.

    Embeddings of repeated images (the target page of every episode of a task) are
    cached by a hash of their pixels, in a bounded LRU. Thread-safe.

    Args:
        model_path: A directory holding a ``CLIPModel`` checkpoint (``config.json`` with
            ``model_type: clip``, its weights and ideally ``preprocessor_config.json``),
            or a hub id such as ``openai/clip-vit-base-patch32``.
        device: Torch device (default: ``"cuda"`` when available, else ``"cpu"``).
        batch_size: Images per forward pass in :meth:`embed`.
        cache_size: Most embeddings kept (0 disables the cache).

    Raises:
        FileNotFoundError: If ``model_path`` does not exist.
        ValueError: If it is not a directory with CLIP weights, or an argument is invalid.

    """

    def __init__(
        self,
        model_path: str | Path,
        device: str | None = None,
        batch_size: int = 16,
        cache_size: int = 256,
    ):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size must be an int >= 0, got {cache_size!r}")
        path = _check_checkpoint(_local_folder(model_path))

        import torch
        from transformers import CLIPModel

        self.model_path = path
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.name = f"clip:{path.name}"
        self.processor = _load_processor(path)
        try:
            model = CLIPModel.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as err:
            raise ValueError(f"cannot load a CLIPModel from {path}: {err}") from err
        self.model = model.to(self.device).eval()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ClipSimilarity({str(self.model_path)!r}, device={str(self.device)!r})"

    def __call__(self, a: Image.Image, b: Image.Image) -> float:
        """Return the cosine similarity of the two images' embeddings, in [-1, 1].

        Raises:
            TypeError: If an argument is not a PIL image.
            ValueError: If an image has no pixels.

        """
        first, second = self.embed([a, b])
        return float(np.clip(np.dot(first, second), -1.0, 1.0))

    def embed(self, images: Sequence[Image.Image]) -> np.ndarray:
        """Return unit-norm image embeddings, one row per image (float32).

        Args:
            images: PIL images of any size and mode (transparency goes on white).

        Raises:
            TypeError: If an item is not a PIL image.
            ValueError: If an image has no pixels.

        """
        if isinstance(images, Image.Image):
            raise TypeError("embed takes a sequence of images; wrap a single image in a list")
        rgb = [_bounded(to_rgb(image)) for image in images]
        keys = [_pixel_hash(image) for image in rgb]
        with self._lock:
            found = {}
            for key in keys:
                if key in self._cache:
                    self._cache.move_to_end(key)  # a hit becomes the most recently used
                    found[key] = self._cache[key]
            missing = list(dict.fromkeys(key for key in keys if key not in found))
            by_key = dict(zip(keys, rgb))
            for start in range(0, len(missing), self.batch_size):
                batch = missing[start : start + self.batch_size]
                for key, vector in zip(batch, self._forward([by_key[k] for k in batch])):
                    found[key] = vector
                    self._remember(key, vector)
        dim = int(self.model.config.projection_dim)
        if not keys:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([found[key] for key in keys])

    def _forward(self, images: list[Image.Image]) -> list[np.ndarray]:
        import torch

        inputs = self.processor(images=images, return_tensors="pt")
        pixels = inputs["pixel_values"].to(self.device)
        with torch.inference_mode():
            out = self.model.get_image_features(pixel_values=pixels)
        # transformers >= 5 returns a model output whose pooler_output is the projection.
        features = out if isinstance(out, torch.Tensor) else out.pooler_output
        features = features.float()
        features = features / features.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return list(features.cpu().numpy())

    def _remember(self, key: str, vector: np.ndarray) -> None:
        if self.cache_size == 0:
            return
        self._cache[key] = vector
        self._cache.move_to_end(key)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)


# A hub id reads "org/name" (letters, digits, "-", "_", "."); anything else is a path.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_HUB_FILES = ["*.json", "*.safetensors", "*.txt"]  # config, weights, processor, vocabulary


def _local_folder(model_path: Any) -> Any:
    """Return a hub id's folder in the Hugging Face cache (fetched once); a path as it is.

    ``openai/clip-vit-base-patch32`` is read as a hub id unless a folder of that name
    exists here, as ``from_pretrained`` reads it; with ``HF_HUB_OFFLINE=1`` only the cache
    is used.
    """
    name = str(model_path) if isinstance(model_path, (str, Path)) else ""
    if not _HUB_ID.fullmatch(name) or Path(name).exists():
        return model_path
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return snapshot_download(name, allow_patterns=_HUB_FILES)
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as err:
        raise FileNotFoundError(
            f"CLIP model {name!r}: not a local folder, and the hub did not give it ({err}); "
            "with HF_HUB_OFFLINE=1 only the Hugging Face cache is read"
        ) from err


def _check_checkpoint(model_path: Any) -> Path:
    if not isinstance(model_path, (str, Path)) or not str(model_path).strip():
        raise ValueError(f"model_path must be a directory path, got {model_path!r}")
    path = Path(model_path).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"CLIP model directory {str(path)!r} does not exist; pass a saved CLIP "
            "checkpoint's folder or a hub id (e.g. openai/clip-vit-base-patch32)"
        )
    if not path.is_dir():
        raise ValueError(f"CLIP model path {str(path)!r} is a file; expected a directory")
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ValueError(f"{str(path)!r} has no config.json: not a saved CLIP checkpoint")
    try:
        model_type = json.loads(config_file.read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError) as err:
        raise ValueError(f"cannot read {config_file}: {err}") from err
    if model_type != "clip":
        raise ValueError(f"{str(path)!r} holds a {model_type!r} model, not a CLIP model")
    if not any((path / name).is_file() for name in _WEIGHT_FILES):
        raise ValueError(
            f"{str(path)!r} has no CLIP weights (expected one of {', '.join(_WEIGHT_FILES)})"
        )
    return path


def _load_processor(path: Path) -> Any:
    try:  # transformers >= 5: the PIL backend (CLIPImageProcessor wants torchvision)
        from transformers import CLIPImageProcessorPil as processor_class
    except ImportError:  # transformers 4: CLIPImageProcessor is the PIL/numpy one
        from transformers import CLIPImageProcessor as processor_class

    if (path / "preprocessor_config.json").is_file():
        try:
            return processor_class.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as err:
            raise ValueError(f"cannot load the image processor of {path}: {err}") from err
    from transformers import CLIPConfig

    size = int(CLIPConfig.from_pretrained(path, local_files_only=True).vision_config.image_size)
    logger.warning(
        "%s has no preprocessor_config.json: using CLIP's standard preprocessing at %d px",
        path,
        size,
    )
    return processor_class(size={"shortest_edge": size}, crop_size={"height": size, "width": size})


def _bounded(image: Image.Image) -> Image.Image:
    pixels = image.width * image.height
    if pixels <= _MAX_PIXELS:
        return image
    scale = (_MAX_PIXELS / pixels) ** 0.5
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.BICUBIC, reducing_gap=3.0)


def _pixel_hash(image: Image.Image) -> str:
    digest = hashlib.sha256(f"{image.mode}:{image.width}x{image.height}:".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()
