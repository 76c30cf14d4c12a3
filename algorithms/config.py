"""Settings every algorithm shares; each algorithm's own config extends :class:`TrainingConfig`.

Most defaults are the paper's setting (Llama-3.1-8B on GPUs: bf16 where the GPU has it,
gradient checkpointing, learning rate 2e-7, gradient clip 1.0); the optimiser's betas and
schedule are torch's and constant, where the official ones are OpenRLHF's (each
attribute says which). On a CPU ``mixed_precision="auto"`` falls back to fp32, so the
same config runs SmolLM2-135M on a laptop.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from sweetrl_gym.lm import CausalLM
from sweetrl_gym.setting_types import describe_type, matches_type

__all__ = ["MIXED_PRECISION_MODES", "TrainingConfig", "resolve_mixed_precision"]

MIXED_PRECISION_MODES = ("auto", "no", "fp16", "bf16")

_Config = TypeVar("_Config", bound="TrainingConfig")


@dataclass(frozen=True)
class TrainingConfig:
    """Optimisation, precision, logging and checkpoint settings shared by all algorithms.

    Attributes:
        learning_rate: AdamW step size of the policy update (paper: 2e-7).
        num_epochs: Passes over the policy's training data.
        batch_size: Training examples (pairs, turns or transitions) per forward pass on
            each process. The effective batch is ``batch_size x
            gradient_accumulation_steps x number of processes``.
        gradient_accumulation_steps: Forward passes whose gradients add up before one
            optimizer step.
        max_length: Longest tokenized turn (prompt + action); a longer prompt loses its
            middle (its start and its latest tokens stay), the action is always kept whole.
        max_grad_norm: Gradient norm clip (``0``: no clipping; official: 1.0).
        weight_decay: AdamW weight decay (official: 0, so the optimiser is Adam).
        adam_betas: AdamW's ``(beta1, beta2)``. Official (OpenRLHF's default): ``(0.9,
            0.95)``; ours: torch's ``(0.9, 0.999)``, with which the CPU configs were tuned.
        lr_scheduler: A ``transformers.get_scheduler`` name (``"constant"``,
            ``"linear"``, ``"cosine"``, ``"cosine_with_min_lr"``, ...). Official:
            ``"cosine_with_min_lr"``; ours: ``"constant"``, since a CPU run's few dozen
            steps leave a schedule little to shape.
        warmup_steps: Optimizer steps of linear warm-up (for schedulers that use it).
        warmup_ratio: Warm-up as a share of each stage's optimizer steps, rounded up
            (official: 0.03); instead of ``warmup_steps``, which must then be 0.
        min_lr_ratio: The floor of ``"cosine_with_min_lr"`` as a share of the learning
            rate (official: 0.1); 0 for every other scheduler.
        mixed_precision: ``"auto"`` (bf16 on a GPU that supports it, fp32 otherwise),
            ``"no"``, ``"bf16"`` or ``"fp16"``; handed to ``accelerate``.
        gradient_checkpointing: Recompute activations in the backward pass (less memory,
            about a third more compute). Needed for 8B models; off is faster on a CPU.
        group_by_length: Batch together training examples of similar length (within
            groups of 32 batches of the shuffled order), so less compute goes to padding
            (for large batches on a GPU; on a CPU per-step costs dominate and it gains
            little). ``False`` (default): random batches.
        seed: Seeds data order, sampling and initialisation.
        output_dir: Where checkpoints, TensorBoard logs and stage results go; ``None``
            keeps everything in memory (no resume).
        save_steps: Optimizer steps between checkpoints within a stage (``0``: only at
            the end of each stage). Needs ``output_dir``.
        logging_steps: Optimizer steps between logged metrics.
        report_to: Where metrics go besides memory: ``"tensorboard"`` (default; under
            ``output_dir``), ``"wandb"``, ``"mlflow"``, ``"trackio"`` or any other
            ``accelerate.tracking`` tracker (installed), a list of them, or ``"none"``.
        progress: Show progress bars.
        lora_rank: Train LoRA adapters of this rank (``peft``, the ``lora`` extra) on a
            frozen base instead of every weight; ``0``: full fine-tuning. A critic
            initialised from the policy becomes a second adapter on the same base, and
            the frozen references are the base with adapters disabled (no copies).
        lora_alpha: LoRA scaling numerator (the update is scaled by alpha / rank).
        lora_dropout: Dropout on the LoRA branch.
        lora_target_modules: Modules that get adapters: ``"all-linear"`` or a list of
            module names (e.g. ``["q_proj", "v_proj"]``).
        save_merged: With LoRA, ``save`` also writes the policy with its adapter merged
            into full weights (``policy-merged/``), loadable without ``peft``.

    """

    learning_rate: float = 2e-7
    num_epochs: int = 1
    batch_size: int = 4
    gradient_accumulation_steps: int = 1
    max_length: int = 4096
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0
    adam_betas: tuple[float, float] = (0.9, 0.999)
    lr_scheduler: str = "constant"
    warmup_steps: int = 0
    warmup_ratio: float = 0.0
    min_lr_ratio: float = 0.0
    mixed_precision: str = "auto"
    gradient_checkpointing: bool = True
    group_by_length: bool = False
    seed: int = 0
    output_dir: str | None = None
    save_steps: int = 50
    logging_steps: int = 1
    report_to: str | tuple[str, ...] = "tensorboard"
    progress: bool = True
    lora_rank: int = 0
    lora_alpha: float = 32.0
    lora_dropout: float = 0.0
    lora_target_modules: str | tuple[str, ...] = "all-linear"
    save_merged: bool = False

    def __post_init__(self) -> None:
        self._check_types()
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{item.name} must be finite, got {value}")
        self._check_positive("learning_rate", "num_epochs", "batch_size")
        self._check_positive("gradient_accumulation_steps", "max_length", "logging_steps")
        self._check_non_negative("max_grad_norm", "weight_decay", "warmup_steps", "save_steps")
        self._check_schedule()
        if self.mixed_precision not in MIXED_PRECISION_MODES:
            raise ValueError(
                f"mixed_precision must be one of {MIXED_PRECISION_MODES}, "
                f"got {self.mixed_precision!r}"
            )
        self._check_non_negative("lora_rank", "lora_dropout")
        self._check_positive("lora_alpha")
        if self.lora_dropout >= 1:
            raise ValueError(f"lora_dropout must be < 1, got {self.lora_dropout}")
        if not isinstance(self.lora_target_modules, str):
            object.__setattr__(self, "lora_target_modules", tuple(self.lora_target_modules))
        if not isinstance(self.report_to, str):
            object.__setattr__(self, "report_to", tuple(self.report_to))
        from algorithms.logger import check_trackers

        check_trackers(self.report_to)

    def _check_schedule(self) -> None:
        betas = tuple(self.adam_betas)
        if len(betas) != 2 or not all(isinstance(b, (int, float)) and 0 <= b < 1 for b in betas):
            raise ValueError(f"adam_betas must be two numbers in [0, 1), got {self.adam_betas!r}")
        object.__setattr__(self, "adam_betas", tuple(float(b) for b in betas))
        self._check_fraction("warmup_ratio")
        if self.warmup_ratio and self.warmup_steps:
            raise ValueError(
                f"warmup_steps={self.warmup_steps} and warmup_ratio={self.warmup_ratio} both "
                "set the warm-up; set one of them to 0"
            )
        if not 0 <= self.min_lr_ratio < 1:
            raise ValueError(f"min_lr_ratio must be in [0, 1), got {self.min_lr_ratio}")
        if self.min_lr_ratio and self.lr_scheduler != "cosine_with_min_lr":
            raise ValueError(
                f"min_lr_ratio={self.min_lr_ratio} is the floor of lr_scheduler="
                f"'cosine_with_min_lr'; lr_scheduler is {self.lr_scheduler!r}"
            )

    def warmup_for(self, total_steps: int) -> int:
        """Return the warm-up steps of a stage of ``total_steps`` optimizer steps."""
        if self.warmup_ratio:
            return math.ceil(self.warmup_ratio * total_steps)
        return self.warmup_steps

    def _check_types(self) -> None:
        # Settings often arrive as text (TOML overrides, JSON): a wrong type must fail
        # here, by name, not as "'>' not supported between 'str' and 'int'" mid-training.
        hints = typing.get_type_hints(type(self))
        for item in fields(self):
            value, hint = getattr(self, item.name), hints.get(item.name, Any)
            if isinstance(value, os.PathLike):  # folders (output_dir, critic_model) as text
                value = os.fspath(value)
                object.__setattr__(self, item.name, value)
            if not matches_type(value, hint):
                raise ValueError(f"{item.name} must be {describe_type(hint)}, got {value!r}")

    def _check_positive(self, *names: str) -> None:
        for name in names:
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")

    def _check_non_negative(self, *names: str) -> None:
        for name in names:
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    def _check_fraction(self, *names: str) -> None:
        for name in names:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")

    def _check_choice(self, name: str, choices: tuple[str, ...]) -> None:
        if getattr(self, name) not in choices:
            raise ValueError(f"{name} must be one of {choices}, got {getattr(self, name)!r}")

    def replace(self: _Config, **overrides: Any) -> _Config:
        """Return a copy with some settings changed.

        Raises:
            TypeError: If a name is not a setting of this config (the message suggests
                the closest one, or says that an older version had it).

        """
        names = [item.name for item in fields(self)]
        for key in overrides:
            if key in self.REMOVED_SETTINGS:
                raise TypeError(
                    f"{type(self).__name__} has no setting {key!r} any more; removed: "
                    f"{self.REMOVED_SETTINGS[key]}. A config, saved algorithm or run folder "
                    "that sets it was written by an older version of sweetrl-gym: leave the "
                    "setting out (a run of that version cannot resume: use a new output_dir)"
                )
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise TypeError(f"{type(self).__name__} has no setting {key!r}{hint}")
        return dataclasses.replace(self, **overrides)

    # Settings that change where, how visibly or in how much memory a run happens, not what
    # it computes: a run stopped for memory resumes with gradient checkpointing turned on.
    RUN_ONLY_SETTINGS: ClassVar[tuple[str, ...]] = (
        "output_dir",
        "progress",
        "save_steps",
        "logging_steps",
        "report_to",
        "gradient_checkpointing",
    )
    # Settings an older version had and this one removed, each with what is left of it: a
    # config, saved algorithm or run folder that sets one was written by that version.
    REMOVED_SETTINGS: ClassVar[dict[str, str]] = {}

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as a JSON-serialisable dict."""
        return dataclasses.asdict(self)

    def run_settings(self) -> dict[str, Any]:
        """Return the settings that decide what a fit computes (its run folder's fingerprint).

        Left out: the settings of where, how visibly and in how much memory it runs
        (``RUN_ONLY_SETTINGS``).
        """
        return {
            key: value for key, value in self.to_dict().items() if key not in self.RUN_ONLY_SETTINGS
        }

    @classmethod
    def from_dict(cls: type[_Config], data: dict[str, Any]) -> _Config:
        """Build a config from :meth:`to_dict` output (unknown keys raise ``TypeError``)."""
        return cls().replace(**data)

    def save(self, path: str | Path) -> None:
        """Write the settings as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls: type[_Config], path: str | Path) -> _Config:
        """Read settings written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text()))


def resolve_mixed_precision(
    mode: str, model: CausalLM | None = None, *, on_gpu: bool = True
) -> str:
    """Turn ``"auto"`` into ``"bf16"`` on a bf16-capable GPU or for a bf16 model, else ``"no"``.

    Args:
        mode: One of :data:`MIXED_PRECISION_MODES`.
        model: The model to train; if its weights are bf16 (e.g. loaded with
            ``dtype="bfloat16"``), ``"auto"`` computes under bf16 autocast on any device.
        on_gpu: Whether training runs on the GPU when there is one (``False``: a model
            kept on the CPU, whose precision a GPU beside it does not decide).

    Returns:
        The mode to hand to ``accelerate``.

    """
    if mode != "auto":
        return mode
    import torch

    if on_gpu and torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return "bf16"
    if model is not None and any(p.dtype == torch.bfloat16 for p in model.parameters()):
        return "bf16"
    return "no"
