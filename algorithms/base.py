"""The algorithm interface: ``Algorithm(policy, config).fit(buffer) -> metrics``, save and load.

Subclasses implement :meth:`Algorithm.train` as a sequence of stages
(:meth:`Algorithm.policy_stage`, :meth:`Algorithm.run_stage`) run by the shared
:class:`~algorithms.trainer.Trainer` (``accelerate``, TensorBoard, checkpoints, resume).
Writing one: docs/bring-your-own.md#an-algorithm.
The policy is a :class:`agents.TransformersAgent`; its model is trained in place, so
``algorithm.policy`` is the trained agent, ready for :func:`agents.evaluate`.
"""

from __future__ import annotations

import difflib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, ClassVar

import torch

from agents.loading import load_causal_lm, load_model, load_tokenizer
from agents.transformers_agent import TransformersAgent
from algorithms.batches import Dialogue, split_by_lengths
from algorithms.callbacks import Callback
from algorithms.config import TrainingConfig
from algorithms.distributed import full_state_dict, map_sharded
from algorithms.fit_context import Diagnostics, FitContext
from algorithms.logger import MetricsLogger
from algorithms.logprobs import (
    TokenizedTurns,
    branch_rows_supported,
    encode_dialogues,
    encode_turn_pairs,
    encode_turns,
    turn_logprobs,
)
from algorithms.lora import (
    POLICY_ADAPTER,
    adapter_active,
    add_adapter,
    is_peft_model,
    load_adapter_weights,
    save_adapter,
)
from algorithms.models import load_weights, save_causal_lm
from algorithms.run_directory import RunDirectory, fingerprint
from algorithms.trainer import Stage, Trainer, leave_cpu, upcast_trainable
from sweetrl_gym.lm import CausalLM, Tokenizer
from sweetrl_gym.processes import process_state
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__all__ = ["Algorithm", "NothingToFit", "require_items"]

_FORMAT = "sweetrl-gym/algorithm/v1"
_AGENT_SETTINGS = (
    "system_prompt",
    "temperature",
    "top_p",
    "max_new_tokens",
    "batch_size",
    "seed",
    "history",
)


class NothingToFit(ValueError):
    """The buffer gives this method nothing to learn from (no pair, no success, ...).

    Raised by :func:`require_items` alone, so that a comparison can skip the method on
    it and fail on any other error of a fit. A ``ValueError``, as these were before.
    """


def require_items(items: Sized, reason: str) -> None:
    """Raise :class:`NothingToFit` with ``reason`` if ``items`` is empty.

    Args:
        items: What the method learns from (trajectories, pairs, ...).
        reason: What is missing and what to do about it.

    Raises:
        NothingToFit: If ``items`` is empty.

    """
    if not len(items):
        raise NothingToFit(reason)


class Algorithm(ABC):
    """Trains a local policy from a :class:`~sweetrl_gym.trajectory.TrajectoryBuffer`.

    Args:
        policy: The agent to train (its model is updated in place).
        config: The algorithm's config (default: the paper's settings).
        callbacks: Hooks called during training; one returning ``False`` from
            ``on_step`` stops it.
        **overrides: Config settings to change, e.g. ``learning_rate=1e-6``.

    Attributes:
        policy: The (trained) agent.
        config: The settings in use.
        metrics: The final metrics of the last ``fit``.
        stopped: Whether a callback stopped the last ``fit`` early.
        history: ``(step, key, value)`` of every metric logged by the last ``fit``.
        fit_seconds: How long the last ``fit`` took, over every launch of a resumed run
            (each launch counted up to its last saved stage, checkpoint or stored result).

    Raises:
        TypeError: If ``policy`` is not a ``TransformersAgent``, ``config`` is of another
            algorithm, or an override names no setting.

    """

    name: ClassVar[str]
    """Its name: in ``methods.run``, ``[methods.NAME]``, run folders and the report."""
    config_class: ClassVar[type[TrainingConfig]]
    """Its settings: a :class:`TrainingConfig` subclass, checked before any work."""
    label: ClassVar[str] = ""
    """How reports show it ("SWEET-RL"); ``""``: its name."""
    controls: ClassVar[str] = ""
    """A control's: the method it controls. A comparison fits a control after that method,
    with that method's settings (``[methods.CONTROLLED]``), hands it that method's folder
    (``FitContext.source``) and sets every method against it in the pooled report."""
    _registry: ClassVar[dict[str, type[Algorithm]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return
        taken = Algorithm._registry.get(cls.name)
        if taken is not None and _import_path(taken) != _import_path(cls):
            raise TypeError(
                f"{_import_path(cls)}: the algorithm name {cls.name!r} is taken by "
                f"{_import_path(taken)}; give the class another name"
            )
        Algorithm._registry[cls.name] = cls

    @classmethod
    def named(cls, spec: str) -> type[Algorithm]:
        """Return the algorithm class ``spec`` names.

        Args:
            spec: A registered name (``"sweet-rl"``, ``"rft"``, a class's ``name`` once its
                module is imported), an import path (``"mypkg.algos:MyAlgorithm"``), or
                the name of an entry point an installed package declares in the group
                ``sweetrl_gym.algorithms``.

        Raises:
            KeyError: If nothing has that name (the message lists the known ones).
            PluginError: If the import fails or names something that is not an
                :class:`Algorithm` subclass with a ``name`` and a ``config_class``.

        """
        from sweetrl_gym.plugins import (
            ALGORITHM_GROUP,
            PluginError,
            entry_point_names,
            is_import_path,
            load_entry_point,
            load_import_path,
        )

        if spec in Algorithm._registry:
            return Algorithm._registry[spec]
        if is_import_path(spec):
            klass = load_import_path(spec, what="algorithm")
        else:
            try:
                klass = load_entry_point(spec, ALGORITHM_GROUP, what="algorithm")
            except KeyError:
                known = sorted({*Algorithm._registry, *entry_point_names(ALGORITHM_GROUP)})
                close = difflib.get_close_matches(spec, known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise KeyError(
                    f"unknown algorithm {spec!r}{hint}; known: {', '.join(known)} (or an "
                    "import path package.module:Class)"
                ) from None
        if not (isinstance(klass, type) and issubclass(klass, Algorithm)):
            raise PluginError(
                f"algorithm {spec!r} is {klass!r}, not a subclass of algorithms.Algorithm"
            )
        for attribute in ("name", "config_class"):
            if not hasattr(klass, attribute):
                raise PluginError(
                    f"algorithm {spec!r} ({klass.__qualname__}) has no {attribute!r} class "
                    "attribute (see docs/bring-your-own.md#an-algorithm)"
                )
        return klass

    def __init__(
        self,
        policy: TransformersAgent,
        config: TrainingConfig | None = None,
        *,
        callbacks: Iterable[Callback] = (),
        **overrides: Any,
    ):
        if not isinstance(policy, TransformersAgent):
            raise TypeError(
                f"{type(self).__name__} trains a local model: policy must be an "
                f"agents.TransformersAgent, got {type(policy).__name__}"
            )
        config = self.config_class() if config is None else config
        if type(config) is not self.config_class:
            raise TypeError(
                f"{type(self).__name__} needs a {self.config_class.__name__}, got "
                f"{type(config).__name__}"
            )
        self.policy = policy
        self.config = config.replace(**overrides)
        self.callbacks = list(callbacks)
        self.metrics: dict[str, float] = {}
        self.stopped = False
        self.history: list[tuple[int, str, float]] = []
        self.fit_seconds = 0.0
        self._fit_trainer: Trainer | None = None

    # -- training ------------------------------------------------------------------

    def fit(
        self, buffer: TrajectoryBuffer | Sequence[Trajectory], *, resume: bool = False
    ) -> dict[str, float]:
        """Train the policy on ``buffer``.

        Under ``accelerate launch`` every process calls ``fit`` with the same buffer:
        training is data-parallel (DDP, FSDP2 or DeepSpeed, as launched) and the passes
        without gradients are split across processes.

        Args:
            buffer: Trajectories (e.g. from :func:`agents.collect` or an official file).
            resume: Continue the run recorded in ``config.output_dir`` (finished stages
                are restored, an interrupted one restarts from its last checkpoint).

        Returns:
            Final metrics, namespaced (``critic/...``, ``train/...``, ``eval/...``).

        Raises:
            TypeError: If ``buffer`` holds something other than trajectories.
            NothingToFit: If the buffer has nothing this algorithm can learn from.
            FileExistsError: If ``output_dir`` holds a run and ``resume`` is false.

        """
        buffer = buffer if isinstance(buffer, TrajectoryBuffer) else TrajectoryBuffer(buffer)
        require_items(buffer, "the buffer is empty; collect trajectories first (agents.collect)")
        self.stopped = False
        self._take_environment_prompt(buffer)
        self._ready_policy()
        data = [t.to_dict() for t in buffer]
        # The trainer lives exactly as long as this call: every stage of the fit uses it.
        trainer = self._fit_trainer = self._make_trainer(data, resume=resume, persistent=True)
        try:
            for callback in self.callbacks:
                callback.on_fit_start(self)
            metrics = dict(self.train(buffer))
            self.stopped = trainer.stopped
            metrics.update(trainer.logger.latest("eval/"))
            self.metrics = metrics
            run = trainer.run
            if run.root is not None and not self.stopped and run.is_main:
                (run.root / "metrics.json").write_text(
                    json.dumps(metrics, indent=2, sort_keys=True) + "\n"
                )
        finally:
            self._close_trainer(trainer)
            self._fit_trainer = None
        for callback in self.callbacks:
            callback.on_fit_end(self, self.metrics)
        return self.metrics

    def _take_environment_prompt(self, buffer: TrajectoryBuffer) -> None:
        """Train a policy with no prompt of its own on the prompt it played with.

        Rollouts hand such a policy its environment's prompt (Frontend: the web
        designer's), while stored turns hold no system message: formatted for training
        they would get the Backend default. The buffer's environment (each episode's
        ``metadata["env"]``) decides, when it names one; the trained policy keeps it.
        """
        if getattr(self.policy, "own_system_prompt", True):
            return
        from sweetrl_gym.envs import agent_prompt_for

        envs = {t.metadata.get("env") for t in buffer}
        if len(envs) != 1 or not isinstance(next(iter(envs)), str):
            return  # episodes of no named environment, or of several: the default
        try:
            prompt = agent_prompt_for(next(iter(envs)))
        except Exception:
            return
        if prompt is not None:
            self.policy.system_prompt = prompt

    def _ready_policy(self) -> None:
        """Give the policy the form it trains in, before any frozen reference reads it.

        With ``lora_rank > 0`` it becomes an adapter on its (frozen) model. Its trainable
        half-precision weights become fp32 master weights (:func:`upcast_trainable`) now
        rather than when its stage starts, so that a reference taken from it (a DPO
        reference pass, SWEET-RL's critic start) computes as the trained copy does and an
        unmoved policy has margin 0: bf16 weights under bf16 autocast differ from their
        fp32 copies by rounding (up to ~4e-4 per pair on SmolLM2, the size of the signal).
        """
        if self.config.lora_rank and not is_peft_model(self.policy.model):
            self.policy.model = add_adapter(self.policy.model, POLICY_ADAPTER, self.config)
        upcast_trainable(self.policy.model)

    def _make_trainer(self, data: Any, *, resume: bool, persistent: bool) -> Trainer:
        from accelerate.utils import set_seed

        set_seed(self.config.seed)
        settings = self.config.run_settings()
        run = RunDirectory(
            self.config.output_dir if persistent else None,
            algorithm=self.name,
            data_fingerprint=fingerprint([settings, self.policy.name, data]),
            resume=resume,
            is_main=process_state().is_main_process,
        )
        logger = MetricsLogger(
            run.tensorboard_dir,
            enabled=run.is_main,
            trackers=self.config.report_to,
            config={"algorithm": self.name, **self.config.to_dict()},
        )
        if logger.enabled:  # a resumed run's history starts with what earlier launches logged
            logger.restore(run.history())
        trainer = Trainer(self.config, run, logger, self.callbacks, self, self.policy.model)
        if self.config.lora_rank and trainer.accelerator.distributed_type.value == "FSDP":
            logger.close()
            raise ValueError(
                "LoRA under FSDP is not supported: adapters share one base, which FSDP would "
                "shard once per stage; launch with DDP (the adapters are small) or set "
                "lora_rank=0"
            )
        return trainer

    def _close_trainer(self, trainer: Trainer) -> None:
        self.history = list(trainer.logger.history)
        self.fit_seconds = round(trainer.run.seconds, 1)
        trainer.logger.close()
        leave_cpu(trainer.accelerator)

    @contextmanager
    def _session(self, data: Any, *, resume: bool = False) -> Iterator[Trainer]:
        """Yield the trainer for one step of the algorithm (``fit_critic``, ...).

        Inside ``fit`` that is the fit's trainer. A step called on its own gets a
        trainer for that call only. Without ``resume`` it keeps nothing on disk; with
        it, the step keeps its run in ``config.output_dir`` as ``fit`` does
        (checkpoints, TensorBoard) and continues the run of the same data found there.
        """
        if self._fit_trainer is not None:
            yield self._fit_trainer
            return
        self._ready_policy()
        trainer = self._fit_trainer = self._make_trainer(data, resume=resume, persistent=resume)
        try:
            yield trainer
        finally:
            self._close_trainer(trainer)
            self._fit_trainer = None

    @abstractmethod
    def train(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Train the policy on ``buffer`` (the algorithm itself); return the final metrics.

        Called by :meth:`fit` (never directly), which has made the trainer, put the
        policy in its training form and seeded everything. Build typed items from the
        buffer, then run each stage: ``self.run_stage(self.policy_stage("policy", items,
        loss, collate))``. A stage checkpoints, resumes and logs on its own.

        Args:
            buffer: The trajectories ``fit`` was given (not empty).

        Returns:
            Final metrics, namespaced (``train/...``, ``critic/...``).

        Raises:
            NothingToFit: Via :func:`require_items`, when the buffer holds nothing this
                algorithm learns from (a comparison then skips it).

        """

    # -- a comparison's hooks (sweetrl compare knows methods only through these) ---------

    @classmethod
    def display_label(cls) -> str:
        """Return how reports show the method: its ``label``, else its ``name``."""
        return cls.label or cls.name

    def prepare(self, context: FitContext) -> None:  # noqa: B027 - optional hook
        """Read what the fit needs from the run before :meth:`fit` (default: nothing).

        A control reads the outputs of the method it controls here, from
        ``context.source``.

        Raises:
            NothingToFit: If the run gives this method nothing to learn from (the
                comparison then skips it with the reason).

        """

    def diagnose(self, context: FitContext) -> Diagnostics | None:
        """Return what a comparison reports about the finished fit (default: nothing).

        Called on every process after :meth:`fit` and :meth:`save`, while the trained
        models are in memory; files go in ``context.directory`` (main process only),
        where a control of this method finds them (its ``context.source``).
        """
        return None

    @property
    def trainer(self) -> Trainer:
        """The trainer of the running ``fit`` call."""
        if self._fit_trainer is None:
            raise RuntimeError("no fit() is running; the trainer exists only during fit()")
        return self._fit_trainer

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        """Log namespaced scalars at the current step (inside ``fit``, e.g. from a callback)."""
        self.trainer.logger.log(metrics, self.trainer.global_step)

    def run_stage(self, stage: Stage) -> dict[str, float]:
        """Train one stage (inside :meth:`train`), then tell the callbacks.

        The stage resumes from its last checkpoint when the fit resumes, and a stage the
        run finished earlier is restored rather than trained again.

        Args:
            stage: What to train and how (:meth:`policy_stage` makes the policy's).

        Returns:
            The stage's final metrics (its loss and what the loss function reported),
            in the stage's namespace.

        """
        metrics = self.trainer.run_stage(stage)
        if not self.trainer.stopped:
            for callback in self.callbacks:
                callback.on_stage_end(self, stage.name, metrics)
        return metrics

    def policy_stage(
        self,
        name: str,
        items: Sequence[Any],
        loss: Any,
        collate: Any = None,
        *,
        weigh: Callable[[Any], float] | None = None,
        length: Callable[[Any], int] | None = None,
    ) -> Stage:
        """Return a stage that trains the policy's model (its adapter, with LoRA).

        Args:
            name: The stage's name (its checkpoints' folder, its progress bar).
            items: Typed training items (e.g. :class:`~algorithms.Dialogue`), plain data
                so that a resumed run can check it trains on the same.
            loss: ``loss(model, batch) -> (loss tensor, {name: float})``: a pure function
                of the model and one collated batch; the floats are logged under
                ``train/``.
            collate: Turns a list of items into a batch (default: the list itself);
                e.g. ``collate_dialogues(self.encode_dialogues)``.
            weigh: An item's weight in its batch's mean (the
                :class:`~algorithms.Stage` field).
            length: An item's length in tokens, for batching by length.

        Returns:
            The stage, for :meth:`run_stage`, with the config's learning rate and epochs.

        """
        model = self.policy.model
        if is_peft_model(model):
            model.set_adapter(POLICY_ADAPTER)
            save = lambda trained, state, directory: save_adapter(  # noqa: E731
                trained, POLICY_ADAPTER, state, directory
            )
            load = lambda directory: load_adapter_weights(model, POLICY_ADAPTER, directory)  # noqa: E731
        else:
            save = save_causal_lm
            load = lambda directory: load_weights(model, directory)  # noqa: E731
        return Stage(
            name=name,
            namespace="train",
            model=model,
            items=items,
            loss=loss,
            learning_rate=self.config.learning_rate,
            num_epochs=self.config.num_epochs,
            save=save,
            load=load,
            collate=collate,
            weigh=weigh,
            length=length,
        )

    def policy_reference(self) -> Any:
        """Return a context in which the policy's model is its frozen start (LoRA: the base).

        Without LoRA the model is used as it is: reference passes run before training.
        """
        model = self.policy.model
        return adapter_active(model, None) if is_peft_model(model) else nullcontext()

    # -- turn formatting -------------------------------------------------------------

    def policy_prompts(self, turns: Sequence[Turn]) -> list[str]:
        """Format each turn's messages with the policy's system prompt and chat template."""
        return self.policy.format_prompts([turn.messages for turn in turns])

    def encode(
        self,
        prompts: Sequence[str],
        actions: Sequence[str],
        tokenizer: Tokenizer | None = None,
        *,
        max_length: int | None = None,
        whole_sequence: bool = False,
    ) -> TokenizedTurns:
        """Tokenize (prompt, action) pairs, one row each.

        Args:
            prompts: Formatted prompts.
            actions: One action per prompt.
            tokenizer: The scored model's tokenizer (default: the policy's).
            max_length: Longest row (default: the config's ``max_length``).
            whole_sequence: Score the prompt's tokens as the action's too
                (:func:`algorithms.logprobs.encode_turns`).

        """
        return encode_turns(
            tokenizer or self.policy.tokenizer,
            prompts,
            actions,
            max_length=max_length or self.config.max_length,
            whole_sequence=whole_sequence,
        )

    def encode_pairs(
        self, prompts: Sequence[str], first: Sequence[str], second: Sequence[str]
    ) -> TokenizedTurns:
        """Tokenize two actions per prompt for the policy: turns ``k`` and ``n + k``.

        The prompt is read once per pair (:func:`algorithms.logprobs.encode_turn_pairs`)
        where the policy's attention takes a block mask, else each action is a plain row;
        either way turn ``k`` is ``first[k]`` and turn ``n + k`` is ``second[k]``.
        """
        if not branch_rows_supported(self.policy.model):
            return self.encode([*prompts, *prompts], [*first, *second])
        return encode_turn_pairs(
            self.policy.tokenizer, prompts, first, second, max_length=self.config.max_length
        )

    def encode_dialogues(
        self,
        dialogues: Sequence[tuple[Sequence[str], Sequence[str]]],
        tokenizer: Tokenizer | None = None,
        *,
        max_length: int | None = None,
    ) -> TokenizedTurns:
        """Tokenize whole dialogues, one row each (``(prompts, actions)`` per dialogue).

        A dialogue is one sequence with per-turn action masks rather than one prefix per
        turn (O(T) tokens instead of O(T^2)); turns are numbered across dialogues.
        ``max_length`` defaults to the config's.
        """
        return encode_dialogues(
            tokenizer or self.policy.tokenizer,
            dialogues,
            max_length=max_length or self.config.max_length,
        )

    def frozen_turn_logprobs(
        self,
        model: CausalLM,
        dialogues: Sequence[Dialogue],
        *,
        context: Callable[[], AbstractContextManager[Any]] = nullcontext,
        mean: bool = False,
        tokenizer: Tokenizer | None = None,
        max_length: int | None = None,
        encode: Callable[[Sequence[tuple[Sequence[str], Sequence[str]]]], TokenizedTurns]
        | None = None,
    ) -> list[list[float]]:
        """Each dialogue's per-turn log-probs under a frozen ``model``, split across processes.

        Dialogues are scored ``batch_size`` at a time (one sequence each) without
        gradients, under the training's autocast and ``context()`` (e.g.
        :meth:`policy_reference`); every process gets all the values.

        Args:
            model: The frozen model (the policy's start, a critic's start).
            dialogues: What it reads.
            context: Makes the context each pass runs in.
            mean: Per-turn token means instead of sums.
            tokenizer: The model's tokenizer (default: the policy's).
            max_length: Longest row (default: the config's ``max_length``).
            encode: Tokenizes the ``(prompts, actions)`` dialogues instead of
                :meth:`encode_dialogues` (``tokenizer`` and ``max_length`` then unused).

        Returns:
            One list of per-turn values per dialogue.

        """

        def compute(chunk: list[Dialogue]) -> list[list[float]]:
            dialogues = [(d.prompts, d.actions) for d in chunk]
            if encode is not None:
                encoded = encode(dialogues)
            else:
                encoded = self.encode_dialogues(dialogues, tokenizer, max_length=max_length)
            with context(), self.trainer.autocast(), torch.no_grad():
                logps = turn_logprobs(model, encoded)
            values = (logps.mean if mean else logps.sum).float().tolist()
            return split_by_lengths(values, [len(d.actions) for d in chunk])

        return map_sharded(dialogues, compute, batch_size=self.config.batch_size)

    # -- persistence -----------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the config, the policy (weights + tokenizer + agent settings) and any critic.

        ``policy/`` loads with ``AutoModelForCausalLM.from_pretrained``; with LoRA it is
        the adapter (``peft.PeftModel.from_pretrained(base, "policy")``), the base is
        ``base/`` (or the hub id recorded in ``algorithm.json``), and ``save_merged``
        adds ``policy-merged/`` with the adapter merged into full weights. Under many
        processes every process calls ``save`` (sharded weights are gathered); only
        the main process writes.

        Args:
            directory: Destination folder (created).

        Returns:
            The folder.

        """
        directory = Path(directory)
        main = process_state().is_main_process
        if main:
            directory.mkdir(parents=True, exist_ok=True)
        model = self.policy.model
        state = full_state_dict(model)  # collective when sharded
        record: dict[str, Any] = {
            "format": _FORMAT,
            "algorithm": self.name,
            "class": _import_path(type(self)),
            "config": self.config.to_dict(),
            "agent": {key: getattr(self.policy, key) for key in _AGENT_SETTINGS},
            "metrics": self.metrics,
            "stopped": self.stopped,
        }
        if main:
            if is_peft_model(model):
                record["base_model"] = _save_lora_policy(model, state, directory)
                if self.config.save_merged:
                    _save_merged(model, directory / "policy-merged")
                    self.policy.tokenizer.save_pretrained(str(directory / "policy-merged"))
            else:
                save_causal_lm(model, state, directory / "policy")
            self.policy.tokenizer.save_pretrained(str(directory / "policy"))
        self.save_components(directory, main)
        if main:
            (directory / "algorithm.json").write_text(
                json.dumps(record, indent=2, sort_keys=True) + "\n"
            )
        process_state().wait_for_everyone()
        return directory

    @classmethod
    def load(
        cls, directory: str | Path, *, device: Any = None, callbacks: Iterable[Callback] = ()
    ) -> Algorithm:
        """Rebuild an algorithm written by :meth:`save`: config, trained policy, critic.

        ``Algorithm.load`` picks the class from the file; ``SweetRL.load`` also checks it.
        To continue an interrupted run, call ``fit(buffer, resume=True)`` on the result
        (its config keeps the run's ``output_dir``).

        Raises:
            FileNotFoundError: If ``directory`` has no ``algorithm.json``.
            ValueError: If the file is of another algorithm or format, or its config holds
                a value this version refuses.
            TypeError: If its config holds a setting this version does not have (one
                that an older version wrote says so).

        """
        directory = Path(directory)
        path = directory / "algorithm.json"
        if not path.exists():
            raise FileNotFoundError(f"{path} not found; is {directory} a saved algorithm?")
        record = json.loads(path.read_text())
        if record.get("format") != _FORMAT:
            raise ValueError(f"{path} has format {record.get('format')!r}, expected {_FORMAT!r}")
        klass = Algorithm._registry.get(record["algorithm"])
        if klass is None and "class" in record:  # an algorithm of the user's: import it
            klass = Algorithm.named(record["class"])
        if klass is None:
            raise ValueError(f"{path}: unknown algorithm {record['algorithm']!r}")
        if cls is not Algorithm and klass is not cls:
            raise ValueError(f"{directory} holds a {klass.__name__}, not a {cls.__name__}")
        try:
            config = klass.config_class.from_dict(record["config"])
        except (TypeError, ValueError) as error:  # named with the file that holds it
            raise type(error)(f"{path}: {error}") from None
        if (directory / "policy" / "adapter_config.json").exists():
            model = _load_lora_policy(directory, record)
            tokenizer = load_tokenizer(directory / "policy", what="saved policy")
        else:
            model, tokenizer = load_causal_lm(directory / "policy", what="saved policy")
        policy = TransformersAgent(model, tokenizer, device=device, **record["agent"])
        algorithm = klass(policy, config, callbacks=callbacks)
        algorithm.load_components(directory)
        algorithm.metrics = dict(record.get("metrics", {}))
        algorithm.stopped = bool(record.get("stopped", False))
        return algorithm

    def save_components(self, directory: Path, main: bool) -> None:  # noqa: B027 - optional hook
        """Write what the algorithm keeps beside the policy (a critic) under ``directory``.

        Called on every process (gathering sharded weights is collective); only the
        process with ``main`` true writes.
        """

    def load_components(self, directory: Path) -> None:  # noqa: B027 - optional hook
        """Read what :meth:`save_components` wrote."""


def _import_path(klass: type) -> str:
    """Return where ``klass`` is imported from, as ``package.module:Class``."""
    return f"{klass.__module__}:{klass.__qualname__}"


def _save_lora_policy(model: CausalLM, state: dict[str, Any], directory: Path) -> str:
    """Write the policy adapter to ``policy/`` and the base where ``load`` finds it.

    Returns:
        The base model's name: a hub id or folder it was loaded from, or ``"base"``
        when its weights were written to ``directory/base`` (a model built in memory).

    """
    save_adapter(model, POLICY_ADAPTER, state, directory / "policy")
    base = model.get_base_model()
    name = str(getattr(base, "name_or_path", "") or "")
    if name and (Path(name).is_dir() or (not Path(name).exists() and "/" in name)):
        return name  # a local folder or a hub id: loadable as it is
    with adapter_active(model, None):
        prefix = "base_model.model."
        base_state = {
            k[len(prefix) :].replace(".base_layer", ""): v
            for k, v in state.items()
            if k.startswith(prefix) and ".lora_" not in k
        }
        base.save_pretrained(
            str(directory / "base"), state_dict=base_state, safe_serialization=True
        )
    return "base"


def _save_merged(model: CausalLM, directory: Path) -> None:
    """Write the policy with its adapter merged into full weights (a copy; ``model`` is kept)."""
    import copy

    merged = copy.deepcopy(model)
    merged.set_adapter(POLICY_ADAPTER)
    merged = merged.merge_and_unload()
    merged.save_pretrained(str(directory), safe_serialization=True)


def _load_lora_policy(directory: Path, record: Mapping[str, Any]) -> CausalLM:
    from peft import PeftModel

    base_name = record.get("base_model", "base")
    base_path = str(directory / "base") if base_name == "base" else base_name
    base = load_model(base_path, what="saved policy's base model")
    return PeftModel.from_pretrained(
        base, str(directory / "policy"), adapter_name=POLICY_ADAPTER, is_trainable=True
    )
