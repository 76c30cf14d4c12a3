"""Model dtypes by name: what configs and loaders say, and what ``from_pretrained`` takes.

Below both model loaders (:mod:`agents.loading` and :mod:`agents.default_model`), which
load with these keywords.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DTYPES", "dtype_kwargs", "torch_dtype"]

DTYPES = ("auto", "float32", "bfloat16", "float16")
"""Dtype names the loaders take (``"auto"``: the checkpoint's own)."""


def torch_dtype(dtype: Any) -> Any:
    """Return the ``torch.dtype`` that ``dtype`` names (a dtype passes through).

    Raises:
        ValueError: If ``dtype`` names no torch dtype.

    """
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    resolved = getattr(torch, str(dtype), None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"unknown dtype {dtype!r}; use one of {DTYPES}")
    return resolved


def dtype_kwargs(dtype: Any) -> dict[str, Any]:
    """Return ``from_pretrained``'s keyword for ``dtype`` (``None``: its own default, none).

    Args:
        dtype: ``None``, ``"auto"`` (the checkpoint's own), a dtype name or a ``torch.dtype``.

    """
    if dtype is None:
        return {}
    import transformers
    from packaging.version import Version

    value = "auto" if dtype == "auto" else torch_dtype(dtype)
    # transformers renamed torch_dtype to dtype in 4.56.
    key = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
    return {key: value}
