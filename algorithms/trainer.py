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
import os
import warnings
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from algorithms.batches import length_grouped_order
from algorithms.config import TrainingConfig, resolve_mixed_precision
from algorithms.logger import MetricsLogger
from algorithms.models import enable_activation_checkpointing
from algorithms.run_directory import RunDirectory
from sweetrl_gym.lm import model_device
from sweetrl_gym.processes import process_state

if TYPE_CHECKING:
    from algorithms.callbacks import Callback

__all__ = [
    "LossFn",
    "Stage",
    "Trainer",
    "fill_deepspeed_batch_size",
    "make_accelerator",
    "upcast_trainable",
]

LossFn = Callable[[torch.nn.Module, Any], tuple[torch.Tensor, dict[str, float]]]
"""``loss(model, batch) -> (scalar loss, float diagnostics)``; the model is the prepared one
and the batch is what the stage's ``collate`` made of a list of items."""


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
        collate: Turns a list of items into the batch the loss takes (tokenized
            tensors); ``None`` hands the list itself.
        setup: Called as ``setup(prepared_model, accelerator)`` once the model is
            prepared and any checkpoint restored (e.g. to build a target network).
        on_step: Called with the prepared model after every optimizer step (e.g. a
            target network's Polyak update), so that losses stay free of side effects.
        weigh: For a loss that is a mean over a batch's tokens or turns: how many of
            them a batch has. Under N processes the trainer then scales each process's
            loss by ``N x local count / global count``, so the averaged gradient is the
            mean over the whole global batch, as on one process (not a mean of
            per-process means). ``None``: losses are means over items of equal-size
            batches, which data parallelism already averages right.
        length: An item's length (e.g. ``Dialogue.text_length``): with the config's
            ``group_by_length``, batches hold items of similar length
            (:func:`algorithms.batches.length_grouped_order`). ``None``: random batches.

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
    collate: Callable[[list[Any]], Any] | None = None
    setup: Callable[[torch.nn.Module, Any], None] | None = None
    on_step: Callable[[torch.nn.Module], None] | None = None
    weigh: Callable[[Any], float] | None = None
    length: Callable[[Any], int] | None = None


def make_accelerator(config: TrainingConfig, model: torch.nn.Module | None = None) -> Any:
    """Create the ``accelerate.Accelerator`` for ``config`` (and the model it will train).

    ``mixed_precision="auto"`` becomes ``"bf16"`` on a bf16-capable GPU and for a model
    loaded in bf16 (its trainable weights are kept in fp32 and computed under bf16
    autocast: see :func:`upcast_trainable`). A DeepSpeed config whose micro-batch size
    is ``"auto"`` gets the config's ``batch_size`` (``prepare`` is never given a data
    loader, from which accelerate would read it).

    Raises:
        RuntimeError: If this process runs several processes of ``accelerate`` already
            set up with another mixed precision (it cannot change within a run).

    """
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState

    cpu = stays_on_cpu(model)
    precision = resolve_mixed_precision(config.mixed_precision, model, on_gpu=not cpu)
    if cpu or _device_changes(cpu):  # accelerate keeps one device per process
        AcceleratorState._reset_state(reset_partial_state=True)
    state = AcceleratorState._shared_state
    if state and state.get("_mixed_precision", precision) != precision:
        if state.get("num_processes", 1) > 1 or state.get("deepspeed_plugins") is not None:
            raise RuntimeError(
                f"this run already set up accelerate with mixed precision "
                f"{state.get('_mixed_precision')!r}; mixed_precision={precision!r} needs a new "
                f"launch (or use the same setting for every algorithm trained in one run)"
            )
        # One process (a notebook, the tests): the setting may change between fits.
        AcceleratorState._reset_state()
    accelerator = Accelerator(
        mixed_precision=precision,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        cpu=cpu,
    )
    plugin = accelerator.state.deepspeed_plugin
    if plugin is not None:
        fill_deepspeed_batch_size(plugin.deepspeed_config, config.batch_size)
    accelerator.register_save_state_pre_hook(_name_each_tensor_once)
    return accelerator


def _name_each_tensor_once(models: Any, weights: list[dict[str, Any]], output_dir: Any) -> None:
    """Drop the second name of a tensor from each state dict a checkpoint is about to write.

    A model with tied weights (SmolLM2's output head is its input embedding) names the one
    tensor twice, and safetensors stores a tensor once: accelerate would drop the second
    name itself, warning "Removed shared tensor" at every checkpoint. The file is the same
    (the first name is kept), and ``load_state`` fills the other from the model's own tie.
    Only exact aliases (same storage, offset, shape and strides) go.
    """
    for state in weights:
        first: dict[tuple[Any, ...], str] = {}
        for name in list(state):
            tensor = state[name]
            if not isinstance(tensor, torch.Tensor) or tensor.device.type == "meta":
                continue
            alias = (
                tensor.device,
                tensor.untyped_storage().data_ptr(),
                tensor.storage_offset(),
                tuple(tensor.shape),
                tensor.stride(),
            )
            if alias in first:
                del state[name]
            else:
                first[alias] = name


def stays_on_cpu(model: torch.nn.Module | None) -> bool:
    """Whether one process trains ``model`` on the CPU although there is a GPU.

    ``accelerate`` would move the model to the GPU; a model its caller keeps on the CPU
    (an agent made with ``device="cpu"``; by default agents go to the GPU) trains where
    it is, so the agent that generates with it, its frozen copies and its batches stay on
    one device. Several processes (``accelerate launch``, ``torchrun``) always train on
    each process's own device.
    """
    return model is not None and _one_process_beside_a_gpu() and model_device(model).type == "cpu"


def _one_process_beside_a_gpu() -> bool:
    """Whether this is a lone process (no launcher) on a machine with a GPU."""
    return torch.cuda.is_available() and int(os.environ.get("WORLD_SIZE", "1")) <= 1


def _device_changes(cpu: bool) -> bool:
    """Whether one process's ``accelerate`` state is on the other side of CPU vs GPU."""
    return _one_process_beside_a_gpu() and (process_state().device.type == "cpu") != cpu


def leave_cpu(accelerator: Any) -> None:
    """After training on the CPU beside a GPU, give the process its default device back.

    ``accelerate`` keeps one device per process (:func:`process_state`), which agents made
    without a device are placed by (:func:`sweetrl_gym.lm.generation.place_model`): once the
    CPU accelerator is done with, a later agent goes to the GPU again.
    """
    if _one_process_beside_a_gpu() and getattr(accelerator, "device", None) == torch.device("cpu"):
        from accelerate.state import AcceleratorState

        AcceleratorState._reset_state(reset_partial_state=True)


def fill_deepspeed_batch_size(deepspeed_config: dict[str, Any], batch_size: int) -> None:
    """Set an ``"auto"`` (or missing) DeepSpeed micro-batch size to ``batch_size``, in place.

    ``Accelerator.prepare(model, optimizer)`` without a data loader cannot resolve
    ``train_micro_batch_size_per_gpu: auto`` and raises; our loaders are made per epoch,
    after ``prepare``, so the size comes from the config instead.
    """
    key = "train_micro_batch_size_per_gpu"
    if deepspeed_config.get(key, "auto") == "auto":
        deepspeed_config[key] = int(batch_size)  # accelerate derives train_batch_size


def make_adamw(
    params: list[Any], *, lr: float, weight_decay: float, betas: tuple[float, float] = (0.9, 0.999)
) -> Any:
    """AdamW, fused where torch has a fused kernel for the parameters' device.

    On a CPU the default (per-tensor loop) step of a 135M model took 19 s against 3.4 s
    fused in one measurement: as long as the forward and backward of a small batch. The
    fused kernel needs plain tensors on a CPU or CUDA device (not FSDP2's DTensors).
    """
    import torch
    from torch.distributed.tensor import DTensor

    fusable = all(
        p.device.type in ("cpu", "cuda") and p.is_floating_point() and not isinstance(p, DTensor)
        for p in params
    )
    return torch.optim.AdamW(
        params, lr=lr, betas=betas, weight_decay=weight_decay, fused=fusable or None
    )


def upcast_trainable(model: torch.nn.Module) -> int:
    """Make the trainable half-precision parameters float32 in place; return how many.

    AdamW on bf16 weights loses updates to rounding (at lr 2e-7 almost every update is
    below bf16's resolution), so trainable weights live in float32 while the forward
    runs under bf16 autocast. They stay float32 after training: casting back would
    round the learned changes away.
    """
    count = 0
    for parameter in model.parameters():
        if parameter.requires_grad and parameter.dtype in (torch.float16, torch.bfloat16):
            parameter.data = parameter.data.float()
            count += 1
    return count


def restore_forward(model: torch.nn.Module, own_forward: Any) -> None:
    """Give ``model`` back the ``forward`` it had before ``accelerator.prepare``.

    Under mixed precision, ``prepare`` sets an autocast ``forward`` on the instance, and
    ``unwrap_model`` replaces it by the class's ``forward`` stripped of every decorator
    (it follows ``__wrapped__``). transformers' own decorators then go too: the one that
    reads the deprecated ``past_key_values`` as ``cache`` (without it a caller that still
    passes ``past_key_values`` would have its states silently ignored), ``return_dict``
    handling and the like.
    """
    if own_forward is None:
        model.__dict__.pop("forward", None)
    else:
        model.forward = own_forward


def _ready_for_training(model: torch.nn.Module, name: str, gradient_checkpointing: bool) -> None:
    """Put ``model`` in training mode, its trainable weights in fp32 (see upcast_trainable)."""
    if gradient_checkpointing:
        enable_activation_checkpointing(model)
    model.train()
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError(f"stage {name!r}: the model has no trainable parameters")
    upcast_trainable(model)


class _Sums:
    """Running sums of named metrics over a count of additions (a window, an epoch)."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = defaultdict(float)
        self.count = 0

    def add(self, values: Iterable[tuple[str, float]]) -> None:
        for key, value in values:
            self.sums[key] += float(value)
        self.count += 1

    def mean(self) -> dict[str, float]:
        return {key: value / self.count for key, value in self.sums.items()}


@dataclass
class _StageRun:
    """A stage being trained: its prepared model and optimiser, and where the loop is.

    Attributes:
        prepared: The model as ``accelerator.prepare`` returned it.
        optimizer: AdamW, prepared.
        scheduler: The learning-rate schedule (not prepared; stepped once per step).
        trainable: The prepared model's trainable parameters (what is clipped).
        own_forward: The model's instance ``forward`` before ``prepare`` (see
            :func:`restore_forward`).
        batch_size: Items per forward pass per process.
        steps_per_epoch: Optimizer steps per epoch.
        total_steps: Optimizer steps of the whole stage.
        step: Optimizer steps done (a resumed stage starts past 0).
        bar: The progress bar.

    """

    prepared: torch.nn.Module
    optimizer: Any
    scheduler: Any
    trainable: list[torch.nn.Parameter]
    own_forward: Any
    batch_size: int
    steps_per_epoch: int
    total_steps: int
    step: int
    bar: Any


class Trainer:
    """Runs :class:`Stage` objects for one ``fit`` call (made by ``Algorithm.fit``, then closed).

    Args:
        config: The algorithm's settings.
        run: Where progress and checkpoints live.
        logger: Metrics sink.
        callbacks: Hooks; ``on_step`` returning ``False`` stops.
        algorithm: Passed to the callbacks.
        model: The model whose dtype decides ``mixed_precision="auto"``.

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
        model: torch.nn.Module | None = None,
    ):
        self.config = config
        self.run = run
        self.logger = logger
        self.callbacks = list(callbacks)
        self.algorithm = algorithm
        self.accelerator = make_accelerator(config, model)
        self.global_step = int(run.progress.get("global_step", 0))
        self.stopped = False

    @property
    def device(self) -> torch.device:
        """The device of this process."""
        return self.accelerator.device

    def autocast(self) -> Any:
        """Return the training forward's precision context, for reference passes."""
        return self.accelerator.autocast()

    def cached(self, name: str, compute: Callable[[], Any]) -> Any:
        """Compute a JSON result once per run (see :meth:`RunDirectory.cached`).

        ``compute`` runs on every process (it shards its own work with
        :func:`algorithms.distributed.map_sharded`); the main process writes the result.
        """
        return self.run.cached(name, compute, self.accelerator.wait_for_everyone)

    def journal_dir(self, name: str) -> Path | None:
        """Where ``cached(name, ...)``'s sharded pass logs its chunks (see ``map_sharded``)."""
        return self.run.journal_dir(name)

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
        run = self._start_stage(stage)
        try:
            metrics = self._train_epochs(stage, run)
        finally:
            run.bar.close()
            self.logger.flush()
        self._finish_stage(stage, run, metrics)
        return metrics

    # -- set-up: the model, the optimiser and its schedule, a checkpoint to resume --------

    def _start_stage(self, stage: Stage) -> _StageRun:
        """Ready the model, optimiser and schedule, prepared; restore a checkpoint, if any."""
        config, accelerator = self.config, self.accelerator
        model = stage.model
        _ready_for_training(model, stage.name, config.gradient_checkpointing)
        batch_size = stage.batch_size or config.batch_size
        batches = math.ceil(len(stage.items) / (batch_size * accelerator.num_processes))
        steps_per_epoch = math.ceil(batches / config.gradient_accumulation_steps)
        total_steps = steps_per_epoch * stage.num_epochs
        optimizer, scheduler = self._optimiser(model, stage.learning_rate, total_steps)
        own_forward = model.__dict__.get("forward")
        prepared, optimizer = accelerator.prepare(model, optimizer)
        # FSDP2 swaps in sharded parameters at prepare: clip those, not the originals.
        trainable = [p for p in prepared.parameters() if p.requires_grad]
        step = self._resume(stage.name, scheduler)
        if stage.setup is not None:
            stage.setup(prepared, accelerator)
        return _StageRun(
            prepared=prepared,
            optimizer=optimizer,
            scheduler=scheduler,
            trainable=trainable,
            own_forward=own_forward,
            batch_size=batch_size,
            steps_per_epoch=steps_per_epoch,
            total_steps=total_steps,
            step=step,
            bar=tqdm(
                total=total_steps,
                initial=step,
                desc=stage.name,
                unit="step",
                disable=not (config.progress and process_state().is_main_process),
            ),
        )

    def _optimiser(
        self, model: torch.nn.Module, learning_rate: float, total_steps: int
    ) -> tuple[Any, Any]:
        """Return AdamW on the trainable parameters and its learning-rate schedule."""
        from transformers import get_scheduler

        config = self.config
        optimizer = make_adamw(
            [p for p in model.parameters() if p.requires_grad],
            lr=learning_rate,
            weight_decay=config.weight_decay,
            betas=config.adam_betas,
        )
        # Not prepared: accelerate steps a prepared scheduler once per process, N times
        # too fast on N processes. We step it once per optimizer step ourselves.
        scheduler = get_scheduler(
            config.lr_scheduler,
            optimizer,
            num_warmup_steps=config.warmup_for(total_steps),
            num_training_steps=total_steps,
            scheduler_specific_kwargs=(
                {"min_lr_rate": config.min_lr_ratio}
                if config.lr_scheduler == "cosine_with_min_lr"
                else None
            ),
        )
        return optimizer, scheduler

    def _resume(self, name: str, scheduler: Any) -> int:
        """Restore stage ``name``'s last checkpoint, if any; return its optimizer steps."""
        checkpoint = self.run.checkpoint(name)
        if checkpoint is None:
            return 0
        path, step, self.global_step = checkpoint
        self.accelerator.load_state(str(path))
        with warnings.catch_warnings():  # "step() before optimizer.step()": intended
            warnings.simplefilter("ignore", UserWarning)
            for _ in range(step):
                scheduler.step()  # schedules are functions of the step: replay them
        return step

    # -- the loop ----------------------------------------------------------------------------

    def _train_epochs(self, stage: Stage, run: _StageRun) -> dict[str, float]:
        """Train the epochs left; return the last epoch's averaged metrics, namespaced."""
        metrics: dict[str, float] = {}
        for epoch in range(run.step // run.steps_per_epoch, stage.num_epochs):
            epoch_sums = self._train_epoch(stage, run, epoch)
            if epoch_sums.count:
                metrics = {f"{stage.namespace}/{k}": v for k, v in epoch_sums.mean().items()}
            if self.stopped:
                break
        return metrics

    def _train_epoch(self, stage: Stage, run: _StageRun, epoch: int) -> _Sums:
        """Train one epoch (the rest of it, when resumed); return its steps' metric sums."""
        accumulation = self.config.gradient_accumulation_steps
        loader = self._loader(stage, epoch, run.batch_size)
        done_in_epoch = run.step - epoch * run.steps_per_epoch
        if done_in_epoch:
            loader = self.accelerator.skip_first_batches(loader, done_in_epoch * accumulation)
        epoch_sums, window = _Sums(), _Sums()  # window: the batches of one optimizer step
        for items in loader:
            loss, diagnostics, grad_norm = self._train_batch(stage, run, items)
            window.add([("loss", float(loss.detach())), *diagnostics.items()])
            if not self.accelerator.sync_gradients:
                continue
            averaged = self._end_step(stage, run, window)
            epoch_sums.add(averaged.items())
            window = _Sums()
            self._report_step(stage, run, averaged, grad_norm)
            if self.stopped:
                break
        return epoch_sums

    def _train_batch(
        self, stage: Stage, run: _StageRun, items: list[Any]
    ) -> tuple[torch.Tensor, dict[str, float], Any]:
        """Forward, backward and (at the window's end) step; return loss, diagnostics, norm."""
        config, accelerator = self.config, self.accelerator
        batch = stage.collate(items) if stage.collate is not None else items
        scale = self._global_mean_scale(stage, batch)
        with accelerator.accumulate(run.prepared):
            loss, diagnostics = stage.loss(run.prepared, batch)
            if scale != 1.0:
                loss = loss * scale
            accelerator.backward(loss)
            grad_norm = None
            if accelerator.sync_gradients and config.max_grad_norm > 0:
                grad_norm = accelerator.clip_grad_norm_(run.trainable, config.max_grad_norm)
            run.optimizer.step()
            run.optimizer.zero_grad()
        return loss, diagnostics, grad_norm

    def _end_step(self, stage: Stage, run: _StageRun, window: _Sums) -> dict[str, float]:
        """Count an optimizer step; return its batches' metrics averaged across processes."""
        if not self.accelerator.optimizer_step_was_skipped:
            run.scheduler.step()
        if stage.on_step is not None:
            stage.on_step(run.prepared)
        run.step += 1
        self.global_step += 1
        return self._reduce(window.mean())

    def _report_step(
        self, stage: Stage, run: _StageRun, averaged: dict[str, float], grad_norm: Any
    ) -> None:
        """Log a step, tell the callbacks (one may stop), and checkpoint when it is time."""
        config = self.config
        averaged["learning_rate"] = run.scheduler.get_last_lr()[0]
        if grad_norm is not None:
            averaged["grad_norm"] = float(grad_norm)
        logged = {f"{stage.namespace}/{k}": v for k, v in averaged.items()}
        if run.step % config.logging_steps == 0 or run.step == run.total_steps:
            self.logger.log(logged, self.global_step)
        run.bar.update(1)
        run.bar.set_postfix(loss=f"{averaged['loss']:.4f}")
        if any(
            cb.on_step(self.algorithm, stage.name, run.step, logged) is False
            for cb in self.callbacks
        ):
            self.stopped = True
        due = config.save_steps and run.step % config.save_steps == 0
        if self.stopped or (due and run.step < run.total_steps):
            self._checkpoint(stage, run.step)

    # -- the end: the trained model, saved --------------------------------------------------

    def _finish_stage(self, stage: Stage, run: _StageRun, metrics: dict[str, float]) -> None:
        """Unwrap the trained model; unless stopped, save it and mark the stage done."""
        accelerator = self.accelerator
        trained = accelerator.unwrap_model(run.prepared, keep_fp32_wrapper=False)
        restore_forward(trained, run.own_forward)
        if not self.stopped:
            directory = self.run.stage_dir(stage.name)
            if directory is not None:
                state = accelerator.get_state_dict(run.prepared)
                if process_state().is_main_process:
                    stage.save(trained, state, directory / "model")
                accelerator.wait_for_everyone()
            self.run.progress["global_step"] = self.global_step
            self.run.mark_done(stage.name, metrics, history=self.logger.history)
        trained.eval()
        accelerator.free_memory()

    def _loader(self, stage: Stage, epoch: int, batch_size: int) -> Any:
        """Return this epoch's prepared loader: a seeded permutation, batched, sharded."""
        seed = [self.config.seed, zlib.crc32(stage.name.encode()), epoch]
        order = np.random.default_rng(seed).permutation(len(stage.items)).tolist()
        items = stage.items
        if self.config.group_by_length and stage.length is not None:
            order = length_grouped_order(
                order,
                [stage.length(item) for item in items],
                batch_size * self.accelerator.num_processes,
                rng=np.random.default_rng([*seed, 1]),
            )
        loader = torch.utils.data.DataLoader(
            order,
            batch_size=batch_size,
            shuffle=False,
            collate_fn=lambda idx: [items[i] for i in idx],
        )
        return self.accelerator.prepare(loader)

    def _global_mean_scale(self, stage: Stage, batch: Any) -> float:
        """Return ``N x local count / global count`` for a ``weigh``-ed stage (else 1)."""
        processes = self.accelerator.num_processes
        if stage.weigh is None or processes == 1:
            return 1.0
        local = float(stage.weigh(batch))
        total = self.accelerator.reduce(torch.tensor([local], device=self.device), reduction="sum")
        return processes * local / max(float(total[0]), 1e-12)

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
        self.run.record_checkpoint(
            stage.name, path, step, self.global_step, history=self.logger.history
        )
