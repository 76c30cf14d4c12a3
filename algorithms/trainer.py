"""The one training loop: ``accelerate`` for devices, precision, accumulation and processes.

Every algorithm is a sequence of :class:`Stage` objects (SWEET-RL: the critic, then the
policy); :meth:`Trainer.run` trains one. The loop is the documented ``accelerate``
pattern (``prepare`` / ``accumulate`` / ``backward`` / ``clip_grad_norm_``), so the same
code runs on a CPU, one GPU, or DDP/FSDP/DeepSpeed under ``accelerate launch``.

Data order is a seeded permutation per (stage, epoch); with the optimizer step stored in
a checkpoint a resumed stage skips exactly the batches it had already trained on.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from algorithms.config import TrainingConfig, resolve_mixed_precision
from algorithms.logger import MetricsLogger
from algorithms.run_directory import RunDirectory

if TYPE_CHECKING:
    from algorithms.callbacks import Callback

__all__ = ["LossFn", "Stage", "Trainer", "make_accelerator"]

LossFn = Callable[[torch.nn.Module, list[Any]], tuple[torch.Tensor, dict[str, float]]]
"""``loss(model, batch) -> (scalar loss, float diagnostics)``; the model is the prepared one."""


@dataclass
class Stage:
    """One optimisation stage.

    Attributes:
        name: Unique within the algorithm; names its checkpoint folder.
        namespace: Prefix of its logged metrics (``"train"``, ``"critic"``).
        model: The module to train (its parameters with ``requires_grad`` are optimised).
        items: Training examples; batches are lists of them.
        loss: ``loss(model, batch) -> (loss, diagnostics)``.
        learning_rate: AdamW step size.
        num_epochs: Passes over ``items``.
        save: ``save(model, state_dict, directory)`` writes the final weights.
        load: ``load(directory)`` restores them into the algorithm when a resumed run
            finds the stage finished.
        batch_size: Items per forward pass per process (default: the config's).

    """

    name: str
    namespace: str
    model: torch.nn.Module
    items: Sequence[Any]
    loss: LossFn
    learning_rate: float
    num_epochs: int
    save: Callable[[torch.nn.Module, dict[str, Any], Path], None]
    load: Callable[[Path], None]
    batch_size: int | None = None


def make_accelerator(config: TrainingConfig) -> Any:
    """Create the ``accelerate.Accelerator`` for ``config``.

    Raises:
        RuntimeError: If this process already runs ``accelerate`` with another mixed
            precision (it cannot change within one process).

    """
    from accelerate import Accelerator

    precision = resolve_mixed_precision(config.mixed_precision)
    try:
        return Accelerator(
            mixed_precision=precision,
            gradient_accumulation_steps=config.gradient_accumulation_steps,
        )
    except ValueError as error:
        if "already been initialized" not in str(error):
            raise
        raise RuntimeError(
            f"this process already set up accelerate with another mixed precision; "
            f"mixed_precision={precision!r} needs a new process (or use the same setting "
            f"for every algorithm trained in one process)"
        ) from None


class Trainer:
    """Runs :class:`Stage` objects for one ``fit`` call.

    Args:
        config: The algorithm's settings.
        run: Where progress and checkpoints live.
        logger: Metrics sink.
        callbacks: Hooks; ``on_step`` returning ``False`` stops.
        algorithm: Passed to the callbacks.

    Attributes:
        accelerator: The ``accelerate.Accelerator``.
        global_step: Optimizer steps across all stages (the TensorBoard x-axis).
        stopped: Whether a callback stopped training.

    """

    def __init__(
        self,
        config: TrainingConfig,
        run: RunDirectory,
        logger: MetricsLogger,
        callbacks: Sequence[Callback],
        algorithm: Any,
    ):
        self.config = config
        self.run = run
        self.logger = logger
        self.callbacks = list(callbacks)
        self.algorithm = algorithm
        self.accelerator = make_accelerator(config)
        self.global_step = int(run.progress.get("global_step", 0))
        self.stopped = False

    @property
    def device(self) -> torch.device:
        """The device of this process."""
        return self.accelerator.device

    def cached(self, name: str, compute: Callable[[], Any]) -> Any:
        """Compute a JSON result once per run (see :meth:`RunDirectory.cached`)."""
        return self.run.cached(name, compute, self.accelerator.wait_for_everyone)

    def run_stage(self, stage: Stage) -> dict[str, float]:
        """Train ``stage`` (or restore it if this run already finished it).

        Returns:
            The stage's metrics (averages over its last epoch), namespaced.

        """
        if self.run.is_done(stage.name):
            stage.load(self.run.stage_dir(stage.name) / "model")
            return self.run.stage_metrics(stage.name)
        if not stage.items:
            raise ValueError(f"stage {stage.name!r} has no training examples")
        config, accelerator = self.config, self.accelerator
        model = stage.model
        if config.gradient_checkpointing and hasattr(model, "gradient_checkpointing_enable"):
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False}
            )
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise ValueError(f"stage {stage.name!r}: the model has no trainable parameters")
        optimizer = torch.optim.AdamW(
            params, lr=stage.learning_rate, weight_decay=config.weight_decay
        )
        batch_size = stage.batch_size or config.batch_size
        batches = math.ceil(len(stage.items) / (batch_size * accelerator.num_processes))
        steps_per_epoch = math.ceil(batches / config.gradient_accumulation_steps)
        total_steps = steps_per_epoch * stage.num_epochs
        from transformers import get_scheduler

        scheduler = get_scheduler(
            config.lr_scheduler,
            optimizer,
            num_warmup_steps=config.warmup_steps,
            num_training_steps=total_steps,
        )
        prepared, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
        # FSDP2 swaps in sharded parameters at prepare: clip those, not the originals.
        trainable = [p for p in prepared.parameters() if p.requires_grad]
        step = 0
        checkpoint = self.run.checkpoint(stage.name)
        if checkpoint is not None:
            path, step, self.global_step = checkpoint
            accelerator.load_state(str(path))
        bar = tqdm(
            total=total_steps,
            initial=step,
            desc=stage.name,
            unit="step",
            disable=not (config.progress and accelerator.is_main_process),
        )
        epoch_metrics: dict[str, float] = {}
        try:
            for epoch in range(step // steps_per_epoch, stage.num_epochs):
                loader = self._loader(stage, epoch, batch_size)
                done_in_epoch = step - epoch * steps_per_epoch
                if done_in_epoch:
                    loader = accelerator.skip_first_batches(
                        loader, done_in_epoch * config.gradient_accumulation_steps
                    )
                epoch_sums: dict[str, float] = defaultdict(float)
                epoch_count = 0
                window: dict[str, float] = defaultdict(float)
                window_count = 0
                for batch in loader:
                    with accelerator.accumulate(prepared):
                        loss, diagnostics = stage.loss(prepared, batch)
                        accelerator.backward(loss)
                        grad_norm = None
                        if accelerator.sync_gradients and config.max_grad_norm > 0:
                            grad_norm = accelerator.clip_grad_norm_(trainable, config.max_grad_norm)
                        optimizer.step()
                        scheduler.step()
                        optimizer.zero_grad()
                    window["loss"] += float(loss.detach())
                    for key, value in diagnostics.items():
                        window[key] += float(value)
                    window_count += 1
                    if not accelerator.sync_gradients:
                        continue
                    step += 1
                    self.global_step += 1
                    averaged = self._reduce({k: v / window_count for k, v in window.items()})
                    for key, value in averaged.items():
                        epoch_sums[key] += value
                    epoch_count += 1
                    window, window_count = defaultdict(float), 0
                    averaged["learning_rate"] = scheduler.get_last_lr()[0]
                    if grad_norm is not None:
                        averaged["grad_norm"] = float(grad_norm)
                    logged = {f"{stage.namespace}/{k}": v for k, v in averaged.items()}
                    if step % config.logging_steps == 0 or step == total_steps:
                        self.logger.log(logged, self.global_step)
                    bar.update(1)
                    bar.set_postfix(loss=f"{averaged['loss']:.4f}")
                    if any(
                        cb.on_step(self.algorithm, stage.name, step, logged) is False
                        for cb in self.callbacks
                    ):
                        self.stopped = True
                    if self.stopped or (
                        config.save_steps and step % config.save_steps == 0 and step < total_steps
                    ):
                        self._checkpoint(stage, step)
                    if self.stopped:
                        break
                if epoch_count:
                    epoch_metrics = {
                        f"{stage.namespace}/{k}": v / epoch_count for k, v in epoch_sums.items()
                    }
                if self.stopped:
                    break
        finally:
            bar.close()
            self.logger.flush()
        trained = accelerator.unwrap_model(prepared, keep_fp32_wrapper=False)
        if not self.stopped:
            directory = self.run.stage_dir(stage.name)
            if directory is not None:
                state = accelerator.get_state_dict(prepared)
                if accelerator.is_main_process:
                    stage.save(trained, state, directory / "model")
                accelerator.wait_for_everyone()
            self.run.progress["global_step"] = self.global_step
            self.run.mark_done(stage.name, epoch_metrics)
        trained.eval()
        accelerator.free_memory()
        return epoch_metrics

    def _loader(self, stage: Stage, epoch: int, batch_size: int) -> Any:
        """Return this epoch's prepared loader: a seeded permutation, batched, sharded."""
        seed = [self.config.seed, zlib.crc32(stage.name.encode()), epoch]
        order = np.random.default_rng(seed).permutation(len(stage.items)).tolist()
        items = stage.items
        loader = torch.utils.data.DataLoader(
            order,
            batch_size=batch_size,
            shuffle=False,
            collate_fn=lambda idx: [items[i] for i in idx],
        )
        return self.accelerator.prepare(loader)

    def _reduce(self, values: dict[str, float]) -> dict[str, float]:
        """Average per-process metrics across processes."""
        if self.accelerator.num_processes == 1:
            return values
        keys = sorted(values)
        tensor = torch.tensor([values[k] for k in keys], device=self.device)
        tensor = self.accelerator.reduce(tensor, reduction="mean")
        return dict(zip(keys, tensor.tolist()))

    def _checkpoint(self, stage: Stage, step: int) -> None:
        path = self.run.new_checkpoint_path(stage.name, step)
        if path is None:
            return
        self.accelerator.save_state(str(path))
        self.accelerator.wait_for_everyone()
        self.run.record_checkpoint(stage.name, path, step, self.global_step)
