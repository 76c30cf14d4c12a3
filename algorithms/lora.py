"""LoRA adapters (``peft``): the policy and a critic as adapters on one frozen base.

With ``lora_rank > 0`` the policy's model becomes a ``peft.PeftModel`` whose adapter
``"default"`` is the policy; a critic initialised from the policy is a second adapter,
``"critic"``, on the same base. Frozen references need no copy: a fresh adapter starts
as the identity (LoRA's B matrix is zero), and the base alone is
:func:`adapter_active` with ``None``. Needs the ``lora`` extra (``pip install
sweetrl-gym[lora]``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from algorithms.config import TrainingConfig
from sweetrl_gym.lm import CausalLM

__all__ = [
    "POLICY_ADAPTER",
    "adapter_active",
    "add_adapter",
    "is_peft_model",
    "load_adapter_weights",
    "save_adapter",
]

POLICY_ADAPTER = "default"
"""The policy's adapter name (``peft`` saves the ``"default"`` adapter at the folder's top)."""


def _peft() -> Any:
    try:
        import peft
    except ImportError:
        raise ImportError(
            "lora_rank > 0 needs peft: pip install 'sweetrl-gym[lora]' (or pip install peft)"
        ) from None
    return peft


def is_peft_model(model: CausalLM) -> bool:
    """Whether ``model`` is a ``peft.PeftModel`` (without importing peft if absent)."""
    return any(klass.__name__ == "PeftModel" for klass in type(model).__mro__)


def add_adapter(model: CausalLM, name: str, config: TrainingConfig) -> CausalLM:
    """Add a LoRA adapter ``name`` to ``model`` (wrapping it in a ``PeftModel`` the first time).

    Args:
        model: A ``transformers`` causal LM, or a ``PeftModel`` already holding adapters.
        name: The adapter's name.
        config: Gives ``lora_rank``, ``lora_alpha``, ``lora_dropout``,
            ``lora_target_modules``.

    Returns:
        The ``PeftModel`` (the base's weights are frozen; ``name`` is not activated).

    """
    peft = _peft()
    targets = config.lora_target_modules
    lora = peft.LoraConfig(
        r=config.lora_rank,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=targets if isinstance(targets, str) else list(targets),
        task_type="CAUSAL_LM",
    )
    if is_peft_model(model):
        if name not in model.peft_config:
            model.add_adapter(name, lora)
        return model
    return peft.get_peft_model(model, lora, adapter_name=name)


@contextmanager
def adapter_active(model: CausalLM, name: str | None) -> Iterator[None]:
    """Run the block with adapter ``name`` active and trainable (``None``: the bare base).

    The previously active adapter is restored afterwards. A model without adapters
    ignores ``name=None`` (it is its own base).
    """
    if not is_peft_model(model):
        if name is not None:
            raise ValueError(f"the model has no adapters, so no adapter {name!r}")
        yield
        return
    previous = model.active_adapter
    if name is None:
        with model.disable_adapter():
            yield
        return
    model.set_adapter(name)
    try:
        yield
    finally:
        model.set_adapter(previous)


def save_adapter(model: CausalLM, name: str, state_dict: dict[str, Any], directory: Path) -> None:
    """Write adapter ``name`` in peft's format (config + safetensors) to ``directory``."""
    from peft.utils import get_peft_model_state_dict
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    model.peft_config[name].save_pretrained(str(directory))
    weights = get_peft_model_state_dict(model, state_dict=state_dict, adapter_name=name)
    save_file(
        {k: v.detach().contiguous().cpu() for k, v in weights.items()},
        str(directory / "adapter_model.safetensors"),
    )


def load_adapter_weights(model: CausalLM, name: str, directory: Path) -> None:
    """Load weights written by :func:`save_adapter` into adapter ``name`` of ``model``."""
    from peft.utils import set_peft_model_state_dict
    from safetensors.torch import load_file

    weights = load_file(str(Path(directory) / "adapter_model.safetensors"))
    result = set_peft_model_state_dict(model, weights, adapter_name=name)
    if result.unexpected_keys:
        raise ValueError(
            f"{directory}: weights that fit no adapter parameter: {result.unexpected_keys[:3]}"
        )
