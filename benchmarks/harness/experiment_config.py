"""Comparison configs: TOML files in ``benchmarks/configs/`` plus ``section.key=value`` overrides.

A config names everything a comparison depends on, so two runs of one config compare
fairly and ``results.json`` can record it whole. :func:`load_config` reads one into a
:class:`ComparisonConfig`, checked whole before any work::

    config = load_config("smoke", ["data.train_tasks=8", "methods.run=['zero-shot', 'rft']"])
    config.policy.model          # "tiny"
    config.to_dict()             # the plain dict run folders record (config.json)

Sections, one frozen dataclass each: ``env`` (:class:`EnvConfig`: which environment and
simulated human), ``policy`` (:class:`PolicyConfig`: the model and its sampling),
``warm_start`` (:class:`WarmStartConfig`: behaviour cloning of a scripted demonstrator
before RL; its result is the base every method starts from), ``data``
(:class:`DataConfig`: training data collected with the base policy, or a trajectory file
to train on instead), ``eval`` (:class:`EvalConfig`: held-out tasks), ``training`` (the
:class:`~algorithms.TrainingConfig` settings every algorithm shares) and ``methods``
(:class:`MethodsConfig`: which to run, plus a table of settings per algorithm, e.g.
``[methods.sweet-rl]``). The ``training``, ``methods.NAME`` and the warm start's
behaviour-cloning settings are free-form here: they are checked against the algorithms'
config classes when a run starts
(:func:`benchmarks.harness.compare.check_training_settings`), so that this module stays
free of torch.

A config kept as a plain dict (a run folder's ``config.json``) becomes one again with
:meth:`ComparisonConfig.from_dict`; the harness's entry points
(:func:`~benchmarks.harness.compare.run_comparison`,
:func:`~benchmarks.harness.seeds.run_seeds`) accept such a dict too and read it so.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from benchmarks.harness.policies import ZERO_SHOT
from sweetrl_gym.setting_types import describe_type, matches_type

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "CONFIG_DIR",
    "DEMONSTRATORS",
    "DTYPES",
    "WARM_START_DEMONSTRATORS",
    "ComparisonConfig",
    "ConfigError",
    "DataConfig",
    "EnvConfig",
    "EvalConfig",
    "MethodsConfig",
    "PolicyConfig",
    "WarmStartConfig",
    "config_names",
    "load_config",
]

CONFIG_DIR = Path(__file__).parents[1] / "configs"  # benchmarks/configs/, shipped in the wheel
DEMONSTRATORS = ("oracle", "random", "immediate", "collaborator")
"""Scripted agents that ``data.demonstrations`` may add to the training data."""
WARM_START_DEMONSTRATORS = ("collaborator", "oracle")
"""Scripted agents a warm start (``warm_start.demonstrator``) may clone."""
DTYPES = ("auto", "float32", "bfloat16", "float16")
"""Values of ``policy.dtype`` (``"auto"``: the checkpoint's own, as ``from_pretrained``)."""

_Config = TypeVar("_Config", bound="_Settings")


class ConfigError(ValueError):
    """A config file, override or setting is invalid; the message says which key and why."""


@dataclass(frozen=True)
class _Settings:
    """Typed settings checked when made, read from and written to plain dicts.

    Subclasses name their section (``SECTION``) and, where the section takes settings of
    its own choosing besides its fields, the field that keeps them (``OTHERS``).
    """

    SECTION: ClassVar[str] = ""
    OTHERS: ClassVar[str] = ""

    def __post_init__(self) -> None:
        prefix = f"{self.SECTION}." if self.SECTION else ""
        hints = typing.get_type_hints(type(self))
        for item in fields(self):
            value, hint = getattr(self, item.name), hints[item.name]
            if isinstance(value, tuple) and typing.get_origin(hint) is list:
                value = list(value)  # a list is what TOML and JSON give back
                object.__setattr__(self, item.name, value)
            if not _matches(value, hint):
                raise ConfigError(f"{prefix}{item.name} must be {_describe(hint)}, got {value!r}")
        self._check()

    def _check(self) -> None:
        """Check what types alone do not (subclasses); raise :class:`ConfigError`."""

    def replace(self: _Config, **changes: Any) -> _Config:
        """Return a copy with some settings changed, checked as a new config.

        Raises:
            ConfigError: If a name is not a setting here (the message suggests the
                closest one), or a value is invalid.

        """
        names = [item.name for item in fields(self)]
        for key in changes:
            if key not in names:
                raise ConfigError(_unknown(key, names, f"{self.SECTION}." if self.SECTION else ""))
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as the plain dict a config file reads as (JSON-serialisable).

        A section's own settings come in field order, then those of its choosing
        (``OTHERS``); an optional setting that is unset (``None``) is left out.
        """
        data: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == self.OTHERS or value is None:
                continue
            data[item.name] = (
                value.to_dict() if isinstance(value, _Settings) else copy.deepcopy(value)
            )
        if self.OTHERS:
            data.update(copy.deepcopy(getattr(self, self.OTHERS)))
        return data

    @classmethod
    def from_dict(cls: type[_Config], data: Mapping[str, Any]) -> _Config:
        """Build the settings from :meth:`to_dict` output or any part of it (the rest: defaults).

        Raises:
            ConfigError: If a key is unknown (did-you-mean) or a value is invalid.

        """
        prefix = f"{cls.SECTION}." if cls.SECTION else ""
        if not isinstance(data, Mapping):
            where = cls.SECTION or "a config"
            raise ConfigError(f"{where} must be a table of settings, got {data!r}")
        hints = typing.get_type_hints(cls)
        own = [item.name for item in fields(cls) if item.name != cls.OTHERS]
        values: dict[str, Any] = {}
        others: dict[str, Any] = {}
        for key, value in data.items():
            section = hints.get(key)
            if key in own and isinstance(section, type) and issubclass(section, _Settings):
                values[key] = section.from_dict(value)
            elif key in own:
                values[key] = copy.deepcopy(value)
            elif cls.OTHERS:
                others[key] = copy.deepcopy(value)
            else:
                raise ConfigError(_unknown(key, own, prefix))
        if cls.OTHERS:
            values[cls.OTHERS] = others
        return cls(**values)


def _matches(value: Any, hint: Any) -> bool:
    """:func:`matches_type`, with the items of a ``list[X]`` checked too."""
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(matches_type(v, item) for v in value)
    if typing.get_origin(hint) is dict:
        return isinstance(value, dict)
    return matches_type(value, hint)


_PLURALS = {int: "integers", str: "strings", float: "numbers"}


def _describe(hint: Any) -> str:
    """Name a setting's type for a message (an unset optional setting is not written)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        return " or ".join(_describe(o) for o in options)
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        return f"a list of {_PLURALS.get(item, describe_type(item))}"
    if typing.get_origin(hint) is dict:
        return "a table of settings"
    return describe_type(hint)


def _unknown(key: str, known: Sequence[str], prefix: str) -> str:
    """Say that ``prefix + key`` is no setting, with the closest known one."""
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f"; did you mean '{prefix}{close[0]}'?" if close else ""
    return f"unknown setting '{prefix}{key}'{hint}"


def _check_positive(section: str, owner: Any, *names: str) -> None:
    for name in names:
        value = getattr(owner, name)
        if value < 1:
            raise ConfigError(f"{section}.{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class EnvConfig(_Settings):
    """``[env]``: the environment, its tasks and its simulated human."""

    SECTION: ClassVar[str] = "env"
    RUN_ONLY_SETTINGS: ClassVar[tuple[str, ...]] = ("simulator_timeout_s",)
    """Settings that change how long a run waits, not what it computes: a run resumes
    with another value."""

    id: str = "ColBench-Backend-v0"
    """The registered environment: ``ColBench-Backend-v0`` or ``ColBench-Frontend-v0``."""
    max_turns: int = 10
    """Agent messages per episode."""
    simulator: str = "default"
    """The simulated human: ``"default"`` (offline) or ``"openai"`` (a chat server's model)."""
    simulator_base_url: str = ""
    """The ``"openai"`` human's server root (``http://host:8000/v1``)."""
    simulator_model: str = ""
    """The model the ``"openai"`` human's server answers with."""
    simulator_prompt_format: str = "ours"
    """The ``"openai"`` human's request: ``"ours"`` (our wording, role-swapped chat) or
    ``"official"`` (the paper's: ``simulator_prompt_file`` as one user message)."""
    simulator_prompt_file: str = ""
    """Your copy of sweet_rl's ``prompts/human_simulator_code_prompt.txt`` (Frontend:
    ``..._html_prompt.txt``), which ``"official"`` needs."""
    simulator_max_tokens: int = 0
    """Most tokens a human's reply (0: the format's own, ours 256, official 4,096)."""
    simulator_on_error: str = "raise"
    """A failed human: ``"raise"`` (no data point: the run stops, naming the endpoint,
    and resumes from its last finished episode), ``"official"`` (the official code's
    rule: "No response." on HTTP 400, a refused request; any other failure raises) or
    ``"no_response"`` ("No response." on any failure, and the episode goes on)."""
    simulator_timeout_s: float = 60.0
    """Seconds the ``"openai"`` human's client waits on its server before it retries. A
    server that answers one request at a time queues every env's: give it the time
    ``num_envs`` replies take. Changing it resumes a run (it changes no reply)."""
    tasks: str = "bundled"
    """The training tasks: ``"bundled"``, or the official JSONL of the training tasks."""
    test_tasks: str = ""
    """The official JSONL of the held-out tasks (``""``: from the same source as ``tasks``)."""
    difficulty: list[int] = field(default_factory=list)
    """Backend only: ``[lo, hi]`` hidden facts that matter (``[]``: all)."""
    families: list[str] = field(default_factory=list)
    """Backend only: bundled task families to keep (``[]``: all)."""
    turn_notice: bool = False
    """Not official: the human's replies say how many turns are left."""
    scoring: str = "ours"
    """Backend only: how a final answer is scored, ``"ours"`` (whether it computes what
    the reference computes) or ``"official"`` (the official evaluator's rules: the
    paper's metric; docs/environments.md says how they differ)."""
    similarity: str = "perceptual"
    """Frontend only: ``"perceptual"`` (offline, no weights) or ``"clip"`` (the paper's score)."""
    clip_model: str = ""
    """The CLIP checkpoint of ``similarity = "clip"``: a local folder or a hub id."""
    answer: str = "final_message"
    """Frontend only: the page scored, ``"final_message"`` (the final message's page; none:
    a black image) or ``"last_page"`` (the official: the last page sent in any turn)."""

    def _check(self) -> None:
        _check_positive("env", self, "max_turns")
        if self.difficulty and len(self.difficulty) != 2:
            raise ConfigError(f"env.difficulty must be [] or [lo, hi], got {self.difficulty!r}")
        if self.simulator not in ("default", "openai"):
            raise ConfigError("env.simulator must be 'default' or 'openai'")
        self._check_similarity()
        self._check_scoring()
        if self.simulator == "openai" and not self.simulator_base_url:
            raise ConfigError(
                "env.simulator = 'openai' needs env.simulator_base_url and simulator_model"
            )
        self._check_simulator_request()

    def _check_similarity(self) -> None:
        similarity, clip_model = self.similarity, self.clip_model
        if self.answer not in ("final_message", "last_page"):
            raise ConfigError(
                f"env.answer must be 'final_message' or 'last_page', got {self.answer!r}"
            )
        if self.answer != "final_message" and self.id != "ColBench-Frontend-v0":
            raise ConfigError("env.answer chooses the scored page of ColBench-Frontend-v0")
        if similarity not in ("perceptual", "clip"):
            raise ConfigError(f"env.similarity must be 'perceptual' or 'clip', got {similarity!r}")
        if similarity == "clip" and not clip_model:
            raise ConfigError(
                "env.similarity = 'clip' needs env.clip_model: a CLIP checkpoint's local "
                "folder or hub id (e.g. openai/clip-vit-base-patch32)"
            )
        if clip_model and similarity != "clip":
            raise ConfigError("env.clip_model is used only with env.similarity = 'clip'")
        if similarity == "clip" and self.id != "ColBench-Frontend-v0":
            raise ConfigError(
                "env.similarity = 'clip' scores Frontend pages (ColBench-Frontend-v0)"
            )

    @property
    def answer_scoring(self) -> str | None:
        """The scoring of Backend answers (``None`` on the Frontend, scored by similarity)."""
        return None if self.id == "ColBench-Frontend-v0" else self.scoring

    def _check_scoring(self) -> None:
        from sweetrl_gym.sandbox import check_scoring

        try:
            check_scoring(self.scoring)
        except ValueError as exc:
            raise ConfigError(f"env.{exc}") from None
        if self.scoring != "ours" and self.id == "ColBench-Frontend-v0":
            raise ConfigError("env.scoring chooses how ColBench-Backend-v0 scores answers")

    def _check_simulator_request(self) -> None:
        """Check the ``openai`` human's request settings (the prompt file is read when used)."""
        from sweetrl_gym.official_data import HUMAN_PROMPT_FILES, REPOSITORY
        from sweetrl_gym.simulators.prompts import PROMPT_FORMATS

        prompt_format, prompt_file = self.simulator_prompt_format, self.simulator_prompt_file
        if prompt_format not in PROMPT_FORMATS:
            raise ConfigError(
                f"env.simulator_prompt_format must be one of {PROMPT_FORMATS}, "
                f"got {prompt_format!r}"
            )
        if self.simulator_on_error not in ("raise", "official", "no_response"):
            raise ConfigError(
                "env.simulator_on_error must be 'raise', 'official' or 'no_response', got "
                f"{self.simulator_on_error!r}"
            )
        if self.simulator_max_tokens < 0:
            raise ConfigError("env.simulator_max_tokens must be >= 0 (0: the format's own)")
        if not self.simulator_timeout_s > 0:
            raise ConfigError(
                f"env.simulator_timeout_s must be > 0 seconds, got {self.simulator_timeout_s!r}"
            )
        changed = prompt_format != "ours" or prompt_file or self.simulator_max_tokens
        if self.simulator != "openai" and (changed or self.simulator_on_error != "raise"):
            raise ConfigError(
                "env.simulator_prompt_format, simulator_prompt_file, simulator_max_tokens and "
                "simulator_on_error set the request of env.simulator = 'openai'"
            )
        kind = "frontend" if self.id == "ColBench-Frontend-v0" else "backend"
        if prompt_format == "official" and not prompt_file:
            raise ConfigError(
                "env.simulator_prompt_format = 'official' needs env.simulator_prompt_file: the "
                f"path of your copy of {HUMAN_PROMPT_FILES[kind]} from "
                f"{REPOSITORY} (CC-BY-NC, not shipped here)"
            )
        if prompt_file and prompt_format != "official":
            raise ConfigError(
                "env.simulator_prompt_file is read only with "
                "env.simulator_prompt_format = 'official'"
            )


@dataclass(frozen=True)
class PolicyConfig(_Settings):
    """``[policy]``: the model every method starts from, how it samples and where it generates."""

    SECTION: ClassVar[str] = "policy"

    model: str = "default"
    """``"default"`` (SmolLM2-135M), ``"tiny"`` (random init), a local folder or a hub id
    (``"meta-llama/Llama-3.1-8B-Instruct"``), read by ``from_pretrained``."""
    temperature: float = 1.0
    """Sampling temperature when collecting training data (paper: 1.0)."""
    eval_temperature: float = 0.0
    """Sampling temperature when evaluating (0: greedy)."""
    max_new_tokens: int = 1024
    """Most tokens of one agent message."""
    batch_size: int = 8
    """Prompts generated together."""
    dtype: str = "auto"
    """``"auto"`` (the checkpoint's own), ``"float32"``, ``"bfloat16"`` or ``"float16"``."""
    device: str = "auto"
    """``"auto"``: this process's accelerate device; or e.g. ``"cpu"``, ``"cuda:0"``."""
    system_prompt: str = "full"
    """``"full"`` (the environment's agent prompt), ``"short"`` (one line, for small models
    trained on the protocol) or the prompt's own text."""
    system_prompt_file: str = ""
    """A file whose text is the system prompt instead (e.g. your copy of sweet_rl's
    ``prompts/llm_agent_code_prompt.txt``, which the published trajectories were made with)."""
    server_command: str = ""
    """A command that serves a saved policy folder for each stage that samples from one
    (``"vllm serve {model} --port {port}"``; ``{device}``: the process's local index)."""
    server_base_url: str = ""
    """The root of a running server that loads models by name (``"http://host:8000/v1"``).
    With neither server setting, generation is local; training always is."""
    server_concurrency: int = 32
    """Requests in flight per process."""
    history: str = "raw"
    """How the agent reads its own past messages: ``"raw"`` (as sent) or ``"content"``
    (the official agent's: the text between the first and second ``OUTPUT:``)."""

    def _check(self) -> None:
        _check_positive("policy", self, "max_new_tokens")
        if self.history not in ("raw", "content"):
            raise ConfigError(f"policy.history must be 'raw' or 'content', got {self.history!r}")
        if not self.model.strip():
            raise ConfigError(
                "policy.model must be 'default', 'tiny', a local model folder or a hub id"
            )
        if self.dtype not in DTYPES:
            raise ConfigError(f"policy.dtype must be one of {DTYPES}, got {self.dtype!r}")
        self._check_server()

    def _check_server(self) -> None:
        from sweetrl_gym.lm import check_base_url, check_server_command

        command, url = self.server_command, self.server_base_url
        if command and url:
            raise ConfigError(
                "set policy.server_command (a server started for each policy) or "
                "policy.server_base_url (a running one), not both"
            )
        try:
            if command:
                check_server_command(command)
            if url:
                check_base_url(url)
        except ValueError as err:
            which = "command" if command else "base_url"
            raise ConfigError(f"policy.server_{which}: {err}") from None
        if self.server_concurrency < 1:
            raise ConfigError(
                f"policy.server_concurrency must be >= 1, got {self.server_concurrency!r}"
            )


@dataclass(frozen=True)
class WarmStartConfig(_Settings):
    """``[warm_start]``: behaviour cloning before RL; every method then starts from the clone.

    Its other keys (``settings``) are :class:`~algorithms.BehaviorCloning` settings over
    ``[training]`` (:meth:`ComparisonConfig.warm_start_settings`).
    """

    SECTION: ClassVar[str] = "warm_start"
    OTHERS: ClassVar[str] = "settings"

    demonstrator: str = ""
    """The scripted agent cloned: ``""`` (no warm start), ``"collaborator"`` or ``"oracle"``."""
    tasks: int = 0
    """Training tasks it demonstrates (the first ones; RL data comes after)."""
    ask_probability: float = 0.5
    """The collaborator's chance of asking about each detail."""
    apply_probability: float | None = None
    """Frontend only: the collaborator's chance of applying each thing the human says
    (``None``: the FrontendCollaborator's own, 0.8; unset, it is not recorded, so Backend
    run folders keep their config)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The section's other keys: behaviour-cloning settings over ``[training]``."""

    def _check(self) -> None:
        demonstrator = self.demonstrator
        if demonstrator and demonstrator not in WARM_START_DEMONSTRATORS:
            raise ConfigError(
                "warm_start.demonstrator must be '' (none) or one of "
                f"{WARM_START_DEMONSTRATORS}, got {demonstrator!r}"
            )
        if self.tasks < 0:
            raise ConfigError(
                f"warm_start.tasks must be a non-negative integer, got {self.tasks!r}"
            )
        if demonstrator and not self.tasks:
            raise ConfigError("warm_start.demonstrator needs warm_start.tasks > 0")
        for key in ("ask_probability", "apply_probability"):
            probability = getattr(self, key)
            if probability is not None and not 0 <= probability <= 1:
                raise ConfigError(f"warm_start.{key} must be in [0, 1], got {probability!r}")


@dataclass(frozen=True)
class DataConfig(_Settings):
    """``[data]``: the training data, collected with the base policy or read from a file."""

    SECTION: ClassVar[str] = "data"

    train_tasks: int = 1000
    """Training tasks played (after the warm start's)."""
    samples_per_task: int = 3
    """Episodes of the base policy per training task."""
    num_envs: int = 8
    """Environments stepped in lockstep while collecting."""
    demonstrations: list[str] = field(default_factory=list)
    """Scripted agents whose episodes join the base policy's (e.g. ``["oracle"]``): for
    policies too weak to ever succeed alone, which would leave nothing to learn."""
    trajectories: str = ""
    """A trajectory file to train every method on instead of collecting (ours or the
    official sweet_rl format); ``""``: collect as above."""

    def _check(self) -> None:
        _check_positive("data", self, "train_tasks", "samples_per_task")
        if any(d not in DEMONSTRATORS for d in self.demonstrations):
            raise ConfigError(f"data.demonstrations must be a list drawn from {DEMONSTRATORS}")


@dataclass(frozen=True)
class EvalConfig(_Settings):
    """``[eval]``: the held-out tasks every method is evaluated on."""

    SECTION: ClassVar[str] = "eval"

    test_tasks: int = 1000
    """Held-out tasks (the first ones of the test split)."""
    samples_per_task: int = 1
    """Episodes per held-out task."""
    num_envs: int = 8
    """Environments stepped in lockstep while evaluating."""

    def _check(self) -> None:
        _check_positive("eval", self, "test_tasks", "samples_per_task")


@dataclass(frozen=True)
class MethodsConfig(_Settings):
    """``[methods]``: the methods compared, and ``[methods.NAME]`` settings of each."""

    SECTION: ClassVar[str] = "methods"
    OTHERS: ClassVar[str] = "settings"

    run: list[str] = field(default_factory=list)
    """The methods, in order: ``"zero-shot"`` (the base policy untrained), an installed
    method's name (an entry point of ``sweetrl_gym.algorithms``) or an import path
    ``package.module:Class``. ``[]``: zero-shot and every installed method but the controls."""
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each ``[methods.NAME]`` table: that algorithm's settings over ``[training]``."""

    def __post_init__(self) -> None:
        if not isinstance(self.run, (list, tuple)) or not all(isinstance(m, str) for m in self.run):
            raise ConfigError("methods.run must be a list of method names")
        super().__post_init__()

    def _check(self) -> None:
        for name, settings in self.settings.items():
            if not isinstance(settings, dict):
                raise ConfigError(
                    f"methods.{name} must be a table of {name}'s settings "
                    f"([methods.{name}]), got {settings!r}"
                )
        self._check_method_names()

    def _check_method_names(self) -> None:
        """Refuse unknown names in ``run`` (did-you-mean).

        A method is ``"zero-shot"``, the name of an installed method (an entry point of
        the ``sweetrl_gym.algorithms`` group, which lists the built-in ones too) or an
        import path ``package.module:Class``. The ``[methods.NAME]`` sections are checked
        when the run starts (:func:`benchmarks.harness.compare.check_training_settings`):
        a class of an import path, and so the name its section goes by, is known only
        once imported.
        """
        from sweetrl_gym.plugins import ALGORITHM_GROUP, entry_point_names, is_import_path

        if not self.run:
            return
        known = (ZERO_SHOT, *entry_point_names(ALGORITHM_GROUP))
        for name in self.run:
            if name not in known and not is_import_path(name):
                close = difflib.get_close_matches(name, known, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise ConfigError(
                    f"unknown method {name!r} in methods.run; {hint}choose from "
                    f"{', '.join(known)}, or give an algorithm's import path "
                    "package.module:Class"
                )


@dataclass(frozen=True)
class ComparisonConfig(_Settings):
    """A whole comparison: what :func:`load_config` returns and the harness runs.

    Made from a file by :func:`load_config`, from a plain dict by :meth:`from_dict`;
    :meth:`to_dict` gives that dict back (what run folders record). Every setting is
    checked when it is made, except ``training`` and the ``[methods.NAME]`` and
    warm-start tables, which the algorithms' config classes check when a run starts.
    """

    name: str = "custom"
    """The config's name: the report's title and the default folder ``runs/compare/NAME``."""
    description: str = ""
    """What the config is for, in a line (``sweetrl configs``, the report)."""
    seed: int = 0
    """Seed of the whole pipeline: warm start, data, critic, policy step, evaluation."""
    seeds: list[int] = field(default_factory=list)
    """Several runs, one per seed in ``OUT/seed-N``, then pooled
    (:mod:`benchmarks.harness.pool`); ``[]``: one run of ``seed`` in ``OUT``."""
    env: EnvConfig = field(default_factory=EnvConfig)
    """``[env]``: the environment and its simulated human."""
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    """``[policy]``: the model and its sampling."""
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)
    """``[warm_start]``: behaviour cloning before RL."""
    data: DataConfig = field(default_factory=DataConfig)
    """``[data]``: the training data."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    """``[eval]``: the held-out tasks."""
    training: dict[str, Any] = field(default_factory=dict)
    """``[training]``: :class:`~algorithms.TrainingConfig` settings every algorithm shares."""
    methods: MethodsConfig = field(default_factory=MethodsConfig)
    """``[methods]``: which methods run, and each one's settings."""

    def _check(self) -> None:
        seeds = self.seeds
        if any(s < 0 for s in seeds):
            raise ConfigError(f"seeds must be a list of non-negative integers, got {seeds!r}")
        if len(set(seeds)) != len(seeds):
            raise ConfigError(f"seeds lists a seed twice: {seeds}")
        self._check_trajectories()

    def _check_trajectories(self) -> None:
        """Refuse what collects training data beside a trajectory file (``data.trajectories``)."""
        if not self.data.trajectories:
            return
        if self.warm_start.demonstrator:
            raise ConfigError(
                "data.trajectories trains every method on the file's episodes from "
                'policy.model as it is, with no warm start: set warm_start.demonstrator = "" '
                "(to start from a cloned policy, give its saved weights, e.g. "
                "methods/warm-start/model/policy of an earlier run, as policy.model)"
            )
        if self.data.demonstrations:
            raise ConfigError(
                "data.trajectories is the whole training data; data.demonstrations adds "
                "episodes to collected data only: set data.demonstrations = []"
            )

    def method_settings(self, name: str) -> dict[str, Any]:
        """Return an algorithm's settings: ``[training]`` updated by ``[methods.NAME]``."""
        return {**self.training, **self.methods.settings.get(name, {})}

    def warm_start_settings(self) -> dict[str, Any]:
        """Return the behaviour-cloning settings of the warm start: ``[training]`` updated by it."""
        return {**self.training, **self.warm_start.settings}

    def with_overrides(self, overrides: Sequence[str]) -> ComparisonConfig:
        """Return a copy with ``section.key=value`` overrides applied, as ``--set`` does.

        Raises:
            ConfigError: As :func:`load_config` does for an override.

        """
        data = self.to_dict()
        for override in overrides:
            _apply_override(data, override)
        return ComparisonConfig.from_dict(data)


def config_names() -> list[str]:
    """Return the names of the bundled configs (``smoke``, ``quick``, ``paper``, ...)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))


def load_config(name_or_path: str | Path, overrides: Sequence[str] = ()) -> ComparisonConfig:
    """Read a config and apply overrides; check it whole.

    Args:
        name_or_path: A bundled config's name (see :func:`config_names`) or a TOML path.
        overrides: ``section.key=value`` strings. The value is read as the setting's type:
            a text setting takes the text as it is; others read it as TOML (``8``,
            ``1e-5``, ``true``, ``['a', 'b']``). Free-form settings (``training``,
            ``methods.NAME``, the warm start's) read it as TOML, else as text.

    Returns:
        The defaults updated by the file (after the config it ``extends``), then by the
        overrides.

    Raises:
        FileNotFoundError: If there is no such config.
        ConfigError: If the file is not valid TOML, or a key or value is invalid (an
            unknown key with the closest known one).

    """
    data = ComparisonConfig().to_dict()
    _merge_file(data, _config_path(name_or_path), ())
    for override in overrides:
        _apply_override(data, override)
    return ComparisonConfig.from_dict(data)


def _config_path(name_or_path: str | Path) -> Path:
    """Return the file of a bundled config's name or of a path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = CONFIG_DIR / f"{name_or_path}.toml"
        if not path.exists():
            raise FileNotFoundError(
                f"no config named {str(name_or_path)!r}; bundled: {', '.join(config_names())} "
                "(or give the path of a .toml file)"
            )
    if not path.exists():
        raise FileNotFoundError(f"config file not found: {path}")
    return path


def _merge_file(config: dict[str, Any], path: Path, chain: tuple[Path, ...]) -> None:
    """Merge a config file into ``config``: first the config it ``extends``, then itself.

    ``extends = "paper"`` (a bundled name, or a path relative to the file) makes a config
    the other one with only what it sets changed, e.g. ``paper-mini``: the paper's
    pipeline at a CPU's size.
    """
    if path.resolve() in chain:
        cycle = " -> ".join(p.name for p in (*chain, path.resolve()))
        raise ConfigError(f"{path}: configs extend each other in a cycle ({cycle})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not valid TOML ({err})") from err
    base = data.pop("extends", None)
    if base is not None:
        if not isinstance(base, str) or not base:
            raise ConfigError(f"{path}: extends must name a config, got {base!r}")
        base_path = Path(base) if not Path(base).suffix else path.parent / base
        _merge_file(config, _config_path(base_path), (*chain, path.resolve()))
    _merge(config, data, where=str(path))


def _apply_override(config: dict[str, Any], override: str) -> None:
    """Apply one ``section.key=value`` override to a config's dict, in place.

    Raises:
        ConfigError: If it is not of that form, names an unknown key, or its value is
            not of the setting's type.

    """
    key, sep, raw = override.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {override!r} must look like section.key=value")
    text = raw.strip()
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text
    *parents, leaf = key.strip().split(".")
    hint = _setting_type(parents, leaf)
    if hint is not None:
        value = _typed(value, text, hint, key.strip(), override)
    nested: dict[str, Any] = {leaf: value}
    for parent in reversed(parents):
        nested = {parent: nested}
    _merge(config, nested, where=f"override {override!r}")


def _setting_type(parents: Sequence[str], leaf: str) -> Any:
    """Return the type of a typed setting (``None``: a section, free-form or unknown)."""
    owner: type[_Settings] = ComparisonConfig
    for parent in parents:
        section = typing.get_type_hints(owner).get(parent)
        if not (isinstance(section, type) and issubclass(section, _Settings)):
            return None
        owner = section
    if leaf == owner.OTHERS:
        return None
    hint = typing.get_type_hints(owner).get(leaf)
    if hint is None or typing.get_origin(hint) is dict:
        return None
    if isinstance(hint, type) and issubclass(hint, _Settings):
        return None
    return hint


def _typed(value: Any, text: str, hint: Any, key: str, override: str) -> Any:
    """Read an override's value as its setting's type; refuse one of another type.

    A text setting takes the text as it is when TOML reads it as something else
    (``policy.model=7`` is the model ``"7"``); an int stands for a float.
    """
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    accepts_text = hint is str or (union and str in typing.get_args(hint))
    if accepts_text and not isinstance(value, str):
        return text
    if _matches(value, hint):
        return value
    listed = typing.get_origin(hint) is list and isinstance(value, str)
    example = f" (a TOML list: {key}=[{value!r}])" if listed else ""
    raise ConfigError(
        f"override {override!r}: {key} must be {_describe(hint)}{example}, got {value!r}"
    )


def _free(path: str) -> bool:
    """Whether the keys under ``path`` (``"training."``, ``"methods.rft."``) are any name."""
    if not path:
        return False
    parts = path.rstrip(".").split(".")
    section = typing.get_type_hints(ComparisonConfig).get(parts[0])
    if len(parts) > 1 or typing.get_origin(section) is dict:
        return True
    return isinstance(section, type) and issubclass(section, _Settings) and bool(section.OTHERS)


def _merge(base: dict[str, Any], data: Mapping[str, Any], where: str, path: str = "") -> None:
    """Merge a file's or an override's settings into a config's dict, in place."""
    for key, value in data.items():
        dotted = f"{path}{key}"
        if key not in base and not _free(path):
            raise ConfigError(f"{where}: {_unknown(key, list(base), path)}")
        if isinstance(value, Mapping):
            if key in base and not isinstance(base[key], dict):
                raise ConfigError(f"{where}: {dotted!r} is a setting, not a section")
            _merge(base.setdefault(key, {}), value, where, f"{dotted}.")
        elif isinstance(base.get(key), dict):
            raise ConfigError(f"{where}: {dotted!r} is a section; give {dotted}.KEY=VALUE")
        else:
            base[key] = value
