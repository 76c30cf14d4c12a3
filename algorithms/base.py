"""The algorithm interface: ``Algorithm(policy, config).fit(buffer) -> metrics``, save and load.

Subclasses implement :meth:`Algorithm._fit` as a sequence of stages run by the shared
:class:`~algorithms.trainer.Trainer` (``accelerate``, TensorBoard, checkpoints, resume).
The policy is a :class:`agents.TransformersAgent`; its model is trained in place, so
``algorithm.policy`` is the trained agent, ready for :func:`agents.evaluate`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from agents.transformers_agent import TransformersAgent
from algorithms.callbacks import Callback
from algorithms.config import TrainingConfig
from algorithms.logger import MetricsLogger
from algorithms.logprobs import TokenizedTurns, encode_turns
from algorithms.models import load_weights, save_causal_lm
from algorithms.run_directory import RunDirectory, fingerprint
from algorithms.trainer import Stage, Trainer
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__all__ = ["Algorithm"]

_FORMAT = "sweetrl-gym/algorithm/v1"
_AGENT_SETTINGS = ("system_prompt", "temperature", "top_p", "max_new_tokens", "batch_size", "seed")
# Settings that change where or how visibly a run happens, not what it computes.
_RUN_ONLY_SETTINGS = ("output_dir", "progress", "save_steps", "logging_steps")


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

    Raises:
        TypeError: If ``policy`` is not a ``TransformersAgent``, ``config`` is of another
            algorithm, or an override names no setting.

    """

    name: ClassVar[str]
    config_class: ClassVar[type[TrainingConfig]]
    _registry: ClassVar[dict[str, type[Algorithm]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            Algorithm._registry[cls.name] = cls

    @classmethod
    def named(cls, name: str) -> type[Algorithm]:
        """Return the algorithm class registered as ``name`` (``"sweet-rl"``, ``"rft"``, ...).

        Raises:
            KeyError: If no algorithm has that name (the message lists them).

        """
        if name not in Algorithm._registry:
            known = ", ".join(sorted(Algorithm._registry))
            raise KeyError(f"unknown algorithm {name!r}; known: {known}")
        return Algorithm._registry[name]

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
        self._trainer: Trainer | None = None

    # -- training ------------------------------------------------------------------

    def fit(
        self, buffer: TrajectoryBuffer | Sequence[Trajectory], *, resume: bool = False
    ) -> dict[str, float]:
        """Train the policy on ``buffer``.

        Args:
            buffer: Trajectories (e.g. from :func:`agents.collect` or an official file).
            resume: Continue the run recorded in ``config.output_dir`` (finished stages
                are restored, an interrupted one restarts from its last checkpoint).

        Returns:
            Final metrics, namespaced (``critic/...``, ``train/...``, ``eval/...``).

        Raises:
            TypeError: If ``buffer`` holds something other than trajectories.
            ValueError: If the buffer has nothing this algorithm can learn from.
            FileExistsError: If ``output_dir`` holds a run and ``resume`` is false.

        """
        buffer = buffer if isinstance(buffer, TrajectoryBuffer) else TrajectoryBuffer(buffer)
        if not len(buffer):
            raise ValueError("the buffer is empty; collect trajectories first (agents.collect)")
        self.stopped = False
        data = [t.to_dict() for t in buffer]
        with self._session(data, resume=resume, persistent=True) as trainer:
            for callback in self.callbacks:
                callback.on_fit_start(self)
            metrics = dict(self._fit(buffer))
            self.stopped = trainer.stopped
            metrics.update(trainer.logger.latest("eval/"))
            self.metrics = metrics
            run = trainer.run
            if run.root is not None and not self.stopped and run.is_main:
                (run.root / "metrics.json").write_text(
                    json.dumps(metrics, indent=2, sort_keys=True) + "\n"
                )
        for callback in self.callbacks:
            callback.on_fit_end(self, self.metrics)
        return self.metrics

    @contextmanager
    def _session(
        self, data: Any, *, resume: bool = False, persistent: bool = False
    ) -> Iterator[Trainer]:
        """Set up (or reuse) the trainer for a ``fit`` or for one step called on its own.

        A step called on its own (``persistent=False``) keeps nothing on disk: only
        ``fit`` checkpoints, logs to TensorBoard and resumes.
        """
        if self._trainer is not None:
            yield self._trainer
            return
        from accelerate import PartialState
        from accelerate.utils import set_seed

        set_seed(self.config.seed)
        settings = {k: v for k, v in self.config.to_dict().items() if k not in _RUN_ONLY_SETTINGS}
        is_main = PartialState().is_main_process
        run = RunDirectory(
            self.config.output_dir if persistent else None,
            algorithm=self.name,
            data_fingerprint=fingerprint([settings, self.policy.name, data]),
            resume=resume,
            is_main=is_main,
        )
        logger = MetricsLogger(run.tensorboard_dir, enabled=is_main)
        self._trainer = Trainer(self.config, run, logger, self.callbacks, self)
        try:
            yield self._trainer
        finally:
            self.history = list(logger.history)
            logger.close()
            self._trainer = None

    @abstractmethod
    def _fit(self, buffer: TrajectoryBuffer) -> dict[str, float]:
        """Run the algorithm's stages with :attr:`trainer`; return the final metrics."""

    @property
    def trainer(self) -> Trainer:
        """The trainer of the running ``fit`` call."""
        if self._trainer is None:
            raise RuntimeError("no fit() is running; the trainer exists only during fit()")
        return self._trainer

    def log_metrics(self, metrics: Mapping[str, float]) -> None:
        """Log namespaced scalars at the current step (inside ``fit``, e.g. from a callback)."""
        self.trainer.logger.log(metrics, self.trainer.global_step)

    def _run_stage(self, stage: Stage) -> dict[str, float]:
        """Train one stage, then tell the callbacks (unless training was stopped)."""
        metrics = self.trainer.run_stage(stage)
        if not self.trainer.stopped:
            for callback in self.callbacks:
                callback.on_stage_end(self, stage.name, metrics)
        return metrics

    def _policy_stage(self, name: str, items: Sequence[Any], loss: Any) -> Stage:
        """Return a stage that trains the policy's model (saved and restored as a causal LM)."""
        model = self.policy.model
        return Stage(
            name=name,
            namespace="train",
            model=model,
            items=items,
            loss=loss,
            learning_rate=self.config.learning_rate,
            num_epochs=self.config.num_epochs,
            save=lambda trained, state, directory: save_causal_lm(trained, state, directory),
            load=lambda directory: load_weights(model, directory),
        )

    # -- turn formatting -------------------------------------------------------------

    def policy_prompts(self, turns: Sequence[Turn]) -> list[str]:
        """Format each turn's messages with the policy's system prompt and chat template."""
        return self.policy.format_prompts([turn.messages for turn in turns])

    def encode(
        self, prompts: Sequence[str], actions: Sequence[str], tokenizer: Any = None
    ) -> TokenizedTurns:
        """Tokenize (prompt, action) pairs with ``max_length`` from the config."""
        return encode_turns(
            tokenizer or self.policy.tokenizer, prompts, actions, max_length=self.config.max_length
        )

    # -- persistence -----------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the config, the policy (weights + tokenizer + agent settings) and any critic.

        Args:
            directory: Destination folder (created).

        Returns:
            The folder.

        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        model = self.policy.model
        model.save_pretrained(str(directory / "policy"), safe_serialization=True)
        self.policy.tokenizer.save_pretrained(str(directory / "policy"))
        self._save_components(directory)
        record = {
            "format": _FORMAT,
            "algorithm": self.name,
            "config": self.config.to_dict(),
            "agent": {key: getattr(self.policy, key) for key in _AGENT_SETTINGS},
            "metrics": self.metrics,
            "stopped": self.stopped,
        }
        (directory / "algorithm.json").write_text(
            json.dumps(record, indent=2, sort_keys=True) + "\n"
        )
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
            ValueError: If the file is of another algorithm or format.

        """
        from transformers import AutoModelForCausalLM, AutoTokenizer

        directory = Path(directory)
        path = directory / "algorithm.json"
        if not path.exists():
            raise FileNotFoundError(f"{path} not found; is {directory} a saved algorithm?")
        record = json.loads(path.read_text())
        if record.get("format") != _FORMAT:
            raise ValueError(f"{path} has format {record.get('format')!r}, expected {_FORMAT!r}")
        klass = Algorithm._registry.get(record["algorithm"])
        if klass is None:
            raise ValueError(f"{path}: unknown algorithm {record['algorithm']!r}")
        if cls is not Algorithm and klass is not cls:
            raise ValueError(f"{directory} holds a {klass.__name__}, not a {cls.__name__}")
        model = AutoModelForCausalLM.from_pretrained(str(directory / "policy"))
        tokenizer = AutoTokenizer.from_pretrained(str(directory / "policy"))
        policy = TransformersAgent(model, tokenizer, device=device, **record["agent"])
        algorithm = klass(
            policy, klass.config_class.from_dict(record["config"]), callbacks=callbacks
        )
        algorithm._load_components(directory)
        algorithm.metrics = dict(record.get("metrics", {}))
        algorithm.stopped = bool(record.get("stopped", False))
        return algorithm

    def _save_components(self, directory: Path) -> None:  # noqa: B027 - optional hook
        """Write algorithm-specific parts (critics) under ``directory``."""

    def _load_components(self, directory: Path) -> None:  # noqa: B027 - optional hook
        """Read what :meth:`_save_components` wrote."""
