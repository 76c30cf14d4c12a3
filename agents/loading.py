"""The one model loader: a causal LM by name, the embedded default, a local folder or a hub id.

Policies, critics and saved policies are all loaded here, so every name reads the same
way: ``"default"`` is the embedded SmolLM2-135M (:mod:`agents.default_model`); a name
that reads as a path (:func:`is_local_path`) must exist, so a typo fails naming it rather
than as a hub error; anything else goes to ``from_pretrained`` unchanged, which prefers
a local folder of that name and keeps to the local cache under ``HF_HUB_OFFLINE=1``.
Dtypes are named as in :mod:`agents.dtypes`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from agents.dtypes import dtype_kwargs
from sweetrl_gym.lm import CausalLM, Tokenizer

__all__ = [
    "DEFAULT_MODEL",
    "is_local_path",
    "load_causal_lm",
    "load_model",
    "load_tokenizer",
    "resolve_model_source",
]

DEFAULT_MODEL = "default"
"""The name of the embedded default model (SmolLM2-135M-Instruct, no hub needed)."""

HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")  # "org/name"


def is_local_path(name: str) -> bool:
    """Whether a model name reads as a file system path rather than a hub id.

    ``./m``, ``/models/m``, ``~/m`` and ``runs/x/model`` are paths; ``org/name`` and
    ``gpt2`` are hub ids (``from_pretrained`` still prefers a local folder of that name).
    """
    if name.startswith((".", "/", "~")):
        return True
    separators = [sep for sep in (os.sep, os.altsep) if sep]
    return any(sep in name for sep in separators) and not HUB_ID.fullmatch(name)


def resolve_model_source(name: str | os.PathLike[str], what: str = "model") -> str:
    """Return what ``from_pretrained`` should get for ``name``: a hub id as it is, a path expanded.

    Args:
        name: A local model folder or a hub id.
        what: The setting it comes from, for the error message.

    Raises:
        FileNotFoundError: If ``name`` is a path (see :func:`is_local_path`) that does
            not exist.

    """
    name = str(name)
    if not is_local_path(name):
        return name
    path = Path(name).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"{what} {name!r}: no such model folder (give an existing folder, or a hub id "
            "such as 'meta-llama/Llama-3.1-8B-Instruct')"
        )
    return str(path)


def load_causal_lm(
    name_or_path: str | os.PathLike[str], *, dtype: Any = None, what: str = "model"
) -> tuple[CausalLM, Tokenizer]:
    """Load a causal LM and its tokenizer: the embedded default, a local folder or a hub id.

    Args:
        name_or_path: :data:`DEFAULT_MODEL`, a local model folder or a hub id (passed to
            ``from_pretrained`` unchanged; ``HF_HUB_OFFLINE=1`` keeps it to the cache).
        dtype: ``None`` (``from_pretrained``'s default; fp32 for the embedded default),
            ``"auto"`` (the checkpoint's own), ``"float32"``, ``"bfloat16"``,
            ``"float16"`` or a ``torch.dtype``.
        what: The setting the name comes from, for error messages.

    Returns:
        ``(model, tokenizer)``.

    Raises:
        FileNotFoundError: If ``name_or_path`` is a path that does not exist.
        OSError: If a hub id cannot be loaded: transformers' error with a hint.

    """
    source = resolve_model_source(name_or_path, what)
    if source == DEFAULT_MODEL:
        from agents.default_model import load_default_model

        return load_default_model(dtype=dtype)
    # The tokenizer first: a bad id or a missing cache fails before any weights load.
    tokenizer = load_tokenizer(source, what=what)
    return load_model(source, dtype=dtype, what=what), tokenizer


def load_model(
    name_or_path: str | os.PathLike[str], *, dtype: Any = None, what: str = "model"
) -> CausalLM:
    """Load a causal LM alone (a critic that reads the policy's tokens, a LoRA base).

    Takes the arguments of :func:`load_causal_lm` and raises as it does.
    """
    source = resolve_model_source(name_or_path, what)
    if source == DEFAULT_MODEL:
        return load_causal_lm(source, dtype=dtype)[0]
    from transformers import AutoModelForCausalLM

    return _from_pretrained(AutoModelForCausalLM, source, what, **dtype_kwargs(dtype))


def load_tokenizer(name_or_path: str | os.PathLike[str], *, what: str = "model") -> Tokenizer:
    """Load the tokenizer of :func:`load_causal_lm`'s model alone; raises as it does."""
    source = resolve_model_source(name_or_path, what)
    if source == DEFAULT_MODEL:
        return load_causal_lm(source)[1]
    from transformers import AutoTokenizer

    return _from_pretrained(AutoTokenizer, source, what)


def _from_pretrained(kind: Any, source: str, what: str, **kwargs: Any) -> Any:
    """``kind.from_pretrained(source)``, with a hub failure said in one line with a hint."""
    try:
        return kind.from_pretrained(source, **kwargs)
    except OSError as err:
        if Path(source).exists():  # a local folder: transformers' message says what is wrong
            raise
        lines = str(err).strip().splitlines() or [type(err).__name__]
        hint = (
            "HF_HUB_OFFLINE is set, so only models already in the cache load: download it "
            "first or set HF_HUB_OFFLINE=0"
            if _hub_offline()
            else "check the id, your network and access to the model (gated models need "
            "`hf auth login`), or set HF_HUB_OFFLINE=1 to use the cache only"
        )
        raise OSError(f"cannot load {what} {source!r} from the hub: {lines[0]} ({hint})") from err


def _hub_offline() -> bool:
    """Whether the hub client is in offline mode (``HF_HUB_OFFLINE``, read at its import)."""
    from huggingface_hub import constants

    flag = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    return flag or bool(getattr(constants, "HF_HUB_OFFLINE", False))
