"""Comparison configs: TOML files in ``benchmarks/configs/`` plus ``section.key=value`` overrides.

A config names everything a comparison depends on, so two runs of one config compare
fairly and ``results.json`` can record it whole::

    config = load_config("smoke", ["data.train_tasks=8", "methods.run=['zero-shot', 'rft']"])
    config["policy"]["model"]   # "tiny"

Sections and their keys (defaults in :data:`DEFAULTS`): ``env`` (which environment and
simulated human), ``policy`` (the model and its sampling), ``warm_start`` (behaviour
cloning of a scripted demonstrator before RL; its result is the base every method starts
from), ``data`` (training data collected with the base policy, or a trajectory file to
train on instead: ``data.trajectories``), ``eval`` (held-out
tasks), ``training`` (the :class:`~algorithms.TrainingConfig` every algorithm shares)
and ``methods`` (which to run, plus a table of settings per algorithm, e.g.
``[methods.sweet-rl]``). The ``training`` and ``methods.NAME`` keys are checked against
the algorithms' config classes when a run starts
(:func:`benchmarks.harness.compare.check_training_settings`), not here, so that this module
stays free of torch.
"""

from __future__ import annotations

import copy
import difflib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.policies import ZERO_SHOT
from sweetrl_gym.setting_types import describe_type, matches_type

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "CONFIG_DIR",
    "DEFAULTS",
    "DEMONSTRATORS",
    "DTYPES",
    "WARM_START_DEMONSTRATORS",
    "ConfigError",
    "apply_override",
    "config_names",
    "load_config",
    "method_settings",
    "warm_start_settings",
]

CONFIG_DIR = Path(__file__).parents[1] / "configs"  # benchmarks/configs/, shipped in the wheel
DEMONSTRATORS = ("oracle", "random", "immediate", "collaborator")
"""Scripted agents that ``data.demonstrations`` may add to the training data."""
WARM_START_DEMONSTRATORS = ("collaborator", "oracle")
"""Scripted agents a warm start (``warm_start.demonstrator``) may clone."""
_WARM_START_KEYS = ("demonstrator", "tasks", "ask_probability", "apply_probability")
DTYPES = ("auto", "float32", "bfloat16", "float16")
"""Values of ``policy.dtype`` (``"auto"``: the checkpoint's own, as ``from_pretrained``)."""

DEFAULTS: dict[str, Any] = {
    "name": "custom",
    "description": "",
    "seed": 0,
    # Seeds of the whole pipeline (warm start, data, critic, policy step): one run each in
    # OUT/seed-N, then pooled (benchmarks.harness.pool). []: one run of `seed` in OUT.
    "seeds": [],
    "env": {
        "id": "ColBench-Backend-v0",
        "max_turns": 10,
        "simulator": "default",  # "default" (offline) or "openai" (an OpenAI-compatible server)
        "simulator_base_url": "",
        "simulator_model": "",
        # The "openai" human's request: "ours" (our wording, role-swapped chat) or
        # "official" (the paper's: the official prompt file as one user message, 4,096
        # tokens), which needs simulator_prompt_file: your copy of sweet_rl's
        # prompts/human_simulator_code_prompt.txt (Frontend: ..._html_prompt.txt).
        "simulator_prompt_format": "ours",
        "simulator_prompt_file": "",
        "simulator_max_tokens": 0,  # most tokens a reply (0: ours 256, official 4,096)
        # "raise" (an episode whose human failed is no data point) or "no_response" (the
        # official code's: the human says "No response." and the episode goes on).
        "simulator_on_error": "raise",
        "tasks": "bundled",  # or the official JSONL of the training tasks
        "test_tasks": "",  # the official JSONL of the held-out tasks ("": same as tasks)
        "difficulty": [],  # backend only: [lo, hi] hidden facts that matter
        "families": [],  # backend only: bundled task families to keep ([]: all)
        "turn_notice": False,  # not official: the human's replies say how many turns are left
        # Frontend only: "perceptual" (offline, no weights) or "clip" (the paper's score:
        # CLIP image embeddings; clip_model a local folder or a hub id).
        "similarity": "perceptual",
        "clip_model": "",
    },
    "policy": {
        # "default" (SmolLM2-135M), "tiny" (random init), a local folder or a hub id
        # ("meta-llama/Llama-3.1-8B-Instruct"), read by from_pretrained.
        "model": "default",
        "temperature": 1.0,  # sampling when collecting training data (paper: 1.0)
        "eval_temperature": 0.0,  # sampling when evaluating (0: greedy)
        "max_new_tokens": 1024,
        "batch_size": 8,
        "dtype": "auto",  # or "float32", "bfloat16", "float16"; "auto": the checkpoint's own
        "device": "auto",  # "auto": this process's accelerate device, or e.g. "cpu", "cuda:0"
        # "full" (the default agent prompt), "short" (one line, for small models trained
        # on the protocol) or the prompt's own text.
        "system_prompt": "full",
        # A file whose text is the system prompt instead (e.g. your copy of sweet_rl's
        # prompts/llm_agent_code_prompt.txt, which the published trajectories were made
        # with: training on them then reads the prompts the official agent saw). "": none.
        "system_prompt_file": "",
        # Generation through an OpenAI-compatible server (collection, SWEET-RL's and
        # ArCHer's samples, evaluation); training stays local. Either a command that
        # serves a saved policy folder, started for each stage that samples from one
        # ("vllm serve {model} --port {port}"; {device}: the process's local index), or
        # the root of a running server that loads models by name ("http://host:8000/v1",
        # e.g. transformers serve). "": local generation.
        "server_command": "",
        "server_base_url": "",
        "server_concurrency": 32,  # requests in flight per process
    },
    # Behaviour cloning before RL: every method then starts from the clone (the "base").
    # Other keys of this section are BehaviorCloning settings over [training].
    "warm_start": {
        "demonstrator": "",  # "": no warm start; "collaborator" or "oracle"
        "tasks": 0,  # training tasks it demonstrates (the first ones; RL data comes after)
        "ask_probability": 0.5,  # the collaborator's chance of asking about each detail
        # Frontend only, optional (so Backend run folders keep their config): the
        # collaborator's chance of applying each thing the human says (default: the
        # FrontendCollaborator's, 0.8); it asks about the design first with ask_probability.
    },
    "data": {
        "train_tasks": 1000,
        "samples_per_task": 3,
        "num_envs": 8,
        # Scripted agents whose episodes join the base policy's (e.g. ["oracle"]): for
        # policies too weak to ever succeed alone, which would leave nothing to learn.
        "demonstrations": [],
        # A trajectory file to train every method on instead of collecting (ours or the
        # official sweet_rl format, e.g. the published colbench_code_offline_15k_llama8b
        # .jsonl): its episodes are the whole training data. "": collect as above.
        "trajectories": "",
    },
    "eval": {"test_tasks": 1000, "samples_per_task": 1, "num_envs": 8},
    "training": {},
    # Which methods to compare, in order: "zero-shot" (the base policy untrained), the
    # name of an installed method (an entry point of sweetrl_gym.algorithms: the built-in
    # ones and your packages') or an import path package.module:Class. []: "zero-shot" and
    # every installed method but the controls.
    "methods": {"run": []},
}


class ConfigError(ValueError):
    """A config file or override is invalid; the message says which key and why."""


def config_names() -> list[str]:
    """Return the names of the bundled configs (``smoke``, ``quick``, ``paper``, ...)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))


def load_config(name_or_path: str | Path, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Read a config and apply overrides.

    Args:
        name_or_path: A bundled config's name (see :func:`config_names`) or a TOML path.
        overrides: ``section.key=value`` strings; the value is read as TOML (``8``,
            ``1e-5``, ``"text"``, ``['a', 'b']``) and otherwise taken as a string.

    Returns:
        The config: :data:`DEFAULTS` updated by the file, then by the overrides.

    Raises:
        FileNotFoundError: If there is no such config.
        ConfigError: If the file is not valid TOML, or a key or value is invalid.

    """
    config = copy.deepcopy(DEFAULTS)
    _merge_file(config, _config_path(name_or_path), ())
    for override in overrides:
        apply_override(config, override)
    _check(config)
    return config


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


def apply_override(config: dict[str, Any], override: str) -> None:
    """Apply one ``section.key=value`` override in place.

    Raises:
        ConfigError: If it is not of that form or names an unknown key.

    """
    key, sep, raw = override.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {override!r} must look like section.key=value")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    *parents, leaf = key.strip().split(".")
    nested: dict[str, Any] = {leaf: value}
    for parent in reversed(parents):
        nested = {parent: nested}
    _merge(config, nested, where=f"override {override!r}")


def _merge(base: dict[str, Any], data: Mapping[str, Any], where: str, path: str = "") -> None:
    for key, value in data.items():
        dotted = f"{path}{key}"
        free = path in ("training.", "methods.", "warm_start.") or path.startswith("methods.")
        if key not in base and not free:
            close = difflib.get_close_matches(key, list(base), n=1)
            hint = f"; did you mean '{path}{close[0]}'?" if close else ""
            raise ConfigError(f"{where}: unknown setting {dotted!r}{hint}")
        if isinstance(value, Mapping):
            if key in base and not isinstance(base[key], dict):
                raise ConfigError(f"{where}: {dotted!r} is a setting, not a section")
            _merge(base.setdefault(key, {}), value, where, f"{dotted}.")
        elif isinstance(base.get(key), dict):
            raise ConfigError(f"{where}: {dotted!r} is a section; give {dotted}.KEY=VALUE")
        else:
            base[key] = value


def _check_types(config: Mapping[str, Any], defaults: Mapping[str, Any], path: str = "") -> None:
    """Refuse a value whose type differs from its default's (an int may stand for a float)."""
    for key, default in defaults.items():
        if key not in config or (path == "" and key in ("training", "methods")):
            continue  # algorithm settings are checked against their config classes
        value, dotted = config[key], f"{path}{key}"
        if isinstance(default, dict):
            _check_types(value, default, f"{dotted}.")
        elif not matches_type(value, type(default)):
            raise ConfigError(f"{dotted} must be {describe_type(type(default))}, got {value!r}")


def _check(config: dict[str, Any]) -> None:
    _check_types(config, DEFAULTS)
    methods = config["methods"]["run"]
    if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
        raise ConfigError("methods.run must be a list of method names")
    _check_method_names(config["methods"])
    for section, key in (
        ("data", "train_tasks"),
        ("data", "samples_per_task"),
        ("eval", "test_tasks"),
        ("eval", "samples_per_task"),
        ("env", "max_turns"),
        ("policy", "max_new_tokens"),
    ):
        value = config[section][key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{section}.{key} must be a positive integer, got {value!r}")
    seeds = config["seeds"]
    if not isinstance(seeds, list) or not all(
        isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds
    ):
        raise ConfigError(f"seeds must be a list of non-negative integers, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"seeds lists a seed twice: {seeds}")
    families = config["env"]["families"]
    if not isinstance(families, list) or not all(isinstance(f, str) for f in families):
        raise ConfigError("env.families must be a list of task family names")
    demos = config["data"]["demonstrations"]
    if not isinstance(demos, list) or any(d not in DEMONSTRATORS for d in demos):
        raise ConfigError(f"data.demonstrations must be a list drawn from {DEMONSTRATORS}")
    model = config["policy"]["model"]
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(
            "policy.model must be 'default', 'tiny', a local model folder or a hub id"
        )
    if config["policy"]["dtype"] not in DTYPES:
        raise ConfigError(
            f"policy.dtype must be one of {DTYPES}, got {config['policy']['dtype']!r}"
        )
    _check_warm_start(config["warm_start"])
    _check_trajectories(config)
    _check_server(config["policy"])
    if config["env"]["simulator"] not in ("default", "openai"):
        raise ConfigError("env.simulator must be 'default' or 'openai'")
    _check_similarity(config["env"])
    if config["env"]["simulator"] == "openai" and not config["env"]["simulator_base_url"]:
        raise ConfigError(
            "env.simulator = 'openai' needs env.simulator_base_url and simulator_model"
        )
    _check_simulator_request(config["env"])


def _check_method_names(methods: Mapping[str, Any]) -> None:
    """Refuse unknown names in ``methods.run`` (did-you-mean).

    A method is ``"zero-shot"``, the name of an installed method (an entry point of the
    ``sweetrl_gym.algorithms`` group, which lists the built-in ones too) or an import path
    ``package.module:Class``. The ``[methods.NAME]`` sections are checked when the run
    starts (:func:`benchmarks.harness.compare.check_training_settings`): a class of an
    import path, and so the name its section goes by, is known only once imported.
    """
    from sweetrl_gym.plugins import ALGORITHM_GROUP, entry_point_names, is_import_path

    known = (ZERO_SHOT, *entry_point_names(ALGORITHM_GROUP))
    run = methods["run"]
    for name in run:
        if name not in known and not is_import_path(name):
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"unknown method {name!r} in methods.run; {hint}choose from {', '.join(known)}, "
                "or give an algorithm's import path package.module:Class"
            )


def _check_similarity(env: Mapping[str, Any]) -> None:
    similarity, clip_model = env["similarity"], env["clip_model"]
    if similarity not in ("perceptual", "clip"):
        raise ConfigError(f"env.similarity must be 'perceptual' or 'clip', got {similarity!r}")
    if similarity == "clip" and not clip_model:
        raise ConfigError(
            "env.similarity = 'clip' needs env.clip_model: a CLIP checkpoint's local folder "
            "or hub id (e.g. openai/clip-vit-base-patch32)"
        )
    if clip_model and similarity != "clip":
        raise ConfigError("env.clip_model is used only with env.similarity = 'clip'")
    if similarity == "clip" and env["id"] != "ColBench-Frontend-v0":
        raise ConfigError("env.similarity = 'clip' scores Frontend pages (ColBench-Frontend-v0)")


def _check_simulator_request(env: Mapping[str, Any]) -> None:
    """Check the ``openai`` human's request settings (the prompt file is read when used)."""
    from sweetrl_gym.official_data import HUMAN_PROMPT_FILES, REPOSITORY
    from sweetrl_gym.simulators.prompts import PROMPT_FORMATS

    prompt_format, prompt_file = env["simulator_prompt_format"], env["simulator_prompt_file"]
    if prompt_format not in PROMPT_FORMATS:
        raise ConfigError(
            f"env.simulator_prompt_format must be one of {PROMPT_FORMATS}, got {prompt_format!r}"
        )
    if env["simulator_on_error"] not in ("raise", "no_response"):
        raise ConfigError("env.simulator_on_error must be 'raise' or 'no_response'")
    if env["simulator_max_tokens"] < 0:
        raise ConfigError("env.simulator_max_tokens must be >= 0 (0: the format's own)")
    changed = prompt_format != "ours" or prompt_file or env["simulator_max_tokens"]
    if env["simulator"] != "openai" and (changed or env["simulator_on_error"] != "raise"):
        raise ConfigError(
            "env.simulator_prompt_format, simulator_prompt_file, simulator_max_tokens and "
            "simulator_on_error set the request of env.simulator = 'openai'"
        )
    kind = "frontend" if env["id"] == "ColBench-Frontend-v0" else "backend"
    if prompt_format == "official" and not prompt_file:
        raise ConfigError(
            "env.simulator_prompt_format = 'official' needs env.simulator_prompt_file: the "
            f"path of your copy of {HUMAN_PROMPT_FILES[kind]} from "
            f"{REPOSITORY} (CC-BY-NC, not shipped here)"
        )
    if prompt_file and prompt_format != "official":
        raise ConfigError(
            "env.simulator_prompt_file is read only with env.simulator_prompt_format = 'official'"
        )


def method_settings(config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Return an algorithm's settings: ``[training]`` updated by ``[methods.NAME]``."""
    return {**config["training"], **config["methods"].get(name, {})}


def warm_start_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return the behaviour-cloning settings of the warm start: ``[training]`` updated by it."""
    extra = {k: v for k, v in config["warm_start"].items() if k not in _WARM_START_KEYS}
    return {**config["training"], **extra}


def _check_trajectories(config: Mapping[str, Any]) -> None:
    """Refuse what collects training data beside a trajectory file (``data.trajectories``)."""
    if not config["data"]["trajectories"]:
        return
    if config["warm_start"]["demonstrator"]:
        raise ConfigError(
            "data.trajectories trains every method on the file's episodes from policy.model "
            'as it is, with no warm start: set warm_start.demonstrator = "" (to start from '
            "a cloned policy, give its saved weights, e.g. methods/warm-start/model/policy of "
            "an earlier run, as policy.model)"
        )
    if config["data"]["demonstrations"]:
        raise ConfigError(
            "data.trajectories is the whole training data; data.demonstrations adds episodes "
            "to collected data only: set data.demonstrations = []"
        )


def _check_server(policy: Mapping[str, Any]) -> None:
    from sweetrl_gym.chat_api import check_base_url
    from sweetrl_gym.model_server import check_server_command

    command, url = policy["server_command"], policy["server_base_url"]
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
        raise ConfigError(f"policy.server_{'command' if command else 'base_url'}: {err}") from None
    concurrency = policy["server_concurrency"]
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"policy.server_concurrency must be >= 1, got {concurrency!r}")


def _check_warm_start(section: Mapping[str, Any]) -> None:
    demonstrator = section["demonstrator"]
    if demonstrator and demonstrator not in WARM_START_DEMONSTRATORS:
        raise ConfigError(
            f"warm_start.demonstrator must be '' (none) or one of {WARM_START_DEMONSTRATORS}, "
            f"got {demonstrator!r}"
        )
    tasks = section["tasks"]
    if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 0:
        raise ConfigError(f"warm_start.tasks must be a non-negative integer, got {tasks!r}")
    if demonstrator and not tasks:
        raise ConfigError("warm_start.demonstrator needs warm_start.tasks > 0")
    for key in ("ask_probability", "apply_probability"):  # apply_probability is optional
        if key not in section:
            continue
        probability = section[key]
        if (
            isinstance(probability, bool)
            or not isinstance(probability, (int, float))
            or not (0 <= probability <= 1)
        ):
            raise ConfigError(f"warm_start.{key} must be in [0, 1], got {probability!r}")
