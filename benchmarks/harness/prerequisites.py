"""What a config needs before it can run, all checked at once and nothing started.

:func:`missing_prerequisites` looks for every file, server and model a comparison config
reads (the official prompt files, the simulated human's server, the trajectory and task
files, the models) and returns one :class:`Missing` for each that is not there, with the
command that fixes it. It loads nothing, writes nothing and downloads nothing: a server
gets one short request, a hub model one metadata call (none with ``HF_HUB_OFFLINE=1``,
where only the local cache counts). ``sweetrl compare --check`` prints the list; the
normal launch refuses with it before it creates the run folder.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness.experiment_config import ComparisonConfig

__all__ = [
    "Missing",
    "PrerequisitesMissing",
    "describe_items",
    "describe_missing",
    "missing_prerequisites",
]

SERVER_TIMEOUT_S = 3.0
"""How long the probe of the simulated human's server waits (one try)."""
HUB_TIMEOUT_S = 5.0
"""How long the hub metadata call of a model not in the cache waits (one try)."""


@dataclass(frozen=True)
class Missing:
    """One prerequisite that is not there."""

    what: str
    """The setting and the value that names it (``env.tasks = data/...``)."""
    why: str
    """What was found instead."""
    fix: str
    """The command (or step) that provides it."""


class PrerequisitesMissing(FileNotFoundError):
    """Raised by a launch whose prerequisites are missing; ``missing`` lists them all."""

    def __init__(self, missing: list[Missing]) -> None:
        self.missing = list(missing)
        super().__init__(describe_missing(self.missing))


def describe_missing(missing: list[Missing]) -> str:
    """Return the list as the CLI prints it: each item, why, and its fix."""
    lines = [f"{len(missing)} prerequisite(s) missing, nothing was started:"]
    lines += describe_items(missing)
    return "\n".join(lines)


def describe_items(missing: list[Missing]) -> list[str]:
    """Return the lines of each item: what and why, then its fix."""
    lines = []
    for item in missing:
        lines += [f"- {item.what}: {item.why}", f"    fix: {item.fix}"]
    return lines


def missing_prerequisites(config: ComparisonConfig) -> list[Missing]:
    """Return every prerequisite of ``config`` that is missing, in the order a run needs them."""
    from sweetrl_gym import official_data as official

    frontend = config.env.id.startswith("ColBench-Frontend")
    kind = "frontend" if frontend else "backend"
    clone = f"git clone {official.REPOSITORY}"
    missing: list[Missing] = []
    env = config.env
    if env.simulator == "openai" and env.simulator_prompt_file:
        missing += _file(
            "env.simulator_prompt_file",
            env.simulator_prompt_file,
            f"{clone}  (the official human prompt, {official.HUMAN_PROMPT_FILES[kind]})",
        )
    if config.policy.system_prompt_file:
        missing += _file(
            "policy.system_prompt_file",
            config.policy.system_prompt_file,
            f"{clone}  (the official agent prompt, {official.AGENT_PROMPT_FILES[kind]})",
        )
    if env.simulator == "openai" and env.simulator_base_url:
        problem = _server_problem(env.simulator_base_url)
        if problem:
            missing.append(
                Missing(
                    f"env.simulator_base_url = {env.simulator_base_url}",
                    f"the simulated human's server does not answer ({problem})",
                    _serve_command(env.simulator_base_url, env.simulator_model, frontend=frontend),
                )
            )
    if config.data.trajectories:
        missing += _file(
            "data.trajectories",
            config.data.trajectories,
            _download(config.data.trajectories, official.OFFLINE_TRAJECTORIES),
        )
    splits = ["test"] if config.data.trajectories else ["train", "test"]
    for split in splits:
        key, path = ("env.test_tasks", env.test_tasks) if split == "test" else ("", "")
        if not path:
            key, path = "env.tasks", env.tasks
        if path == "bundled" or any(item.what.startswith(f"{key} ") for item in missing):
            continue
        hub_file = (
            official.BACKEND_TASK_FILES[split] if not frontend else f"frontend_tasks/{split}.jsonl"
        )
        fix = (
            _download(path, hub_file)
            if not frontend
            else official.missing_task_file_hint("frontend", split)
        )
        missing += _file(key, path, fix)
    for key, model in _models(config):
        problem = _model_problem(model)
        if problem:
            missing.append(
                Missing(
                    f"{key} = {model}",
                    problem,
                    f"accept the model's licence at https://huggingface.co/{model} (gated "
                    f"models), then `hf auth login`; or `hf download {model}`, or give a "
                    "local folder",
                )
            )
    return missing


def _file(key: str, path: str, fix: str) -> list[Missing]:
    if Path(path).is_file():
        return []
    return [Missing(f"{key} = {path}", f"no file at {Path(path).absolute()}", fix)]


def _download(path: str, hub_file: str) -> str:
    """Return the download command of ``hub_file``, pointing at where ``path`` expects it."""
    from sweetrl_gym.official_data import HUB_DATASET, download_command

    normalized = Path(path).as_posix()
    if normalized.endswith(hub_file):
        folder = normalized[: -len(hub_file)].rstrip("/") or "."
        return f"hf download {HUB_DATASET} {hub_file} --repo-type dataset --local-dir {folder}"
    return f"{download_command(hub_file)}  (then point the setting at it)"


def _serve_command(base_url: str, model: str, *, frontend: bool) -> str:
    """Return the official README's server command for the human, at ``base_url``'s port."""
    from urllib.parse import urlparse

    port = urlparse(base_url).port or 8000
    images = " --limit-mm-per-prompt '{\"image\": 2}'" if frontend else ""
    return (
        f"vllm serve {model or '<model>'} --port {port} --tensor-parallel-size 8 "
        f"--max-model-len 16384{images}  (vLLM in its own virtualenv: docs/reproducing.md)"
    )


def _server_problem(base_url: str) -> str:
    """Return why ``base_url`` does not answer, or ``""``: any HTTP answer counts."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models", method="GET")
    try:
        with urllib.request.urlopen(request, timeout=SERVER_TIMEOUT_S):
            return ""
    except urllib.error.HTTPError:
        return ""  # it answered; whether it serves the model, the launch's probe says
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        return str(reason) or type(err).__name__


def _models(config: ComparisonConfig) -> list[tuple[str, str]]:
    """Return the (setting, model) pairs the config loads."""
    models = []
    if config.policy.model:
        models.append(("policy.model", config.policy.model))
    for name in config.methods.run:
        for key, value in config.methods.settings.get(name, {}).items():
            if key.endswith("_model") and isinstance(value, str) and value:
                models.append((f"methods.{name}.{key}", value))
    seen: set[str] = set()
    return [(k, m) for k, m in models if not (m in seen or seen.add(m))]


def _hub_offline() -> bool:
    from huggingface_hub import constants

    flag = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    return flag or bool(constants.HF_HUB_OFFLINE)


def _model_problem(model: str) -> str:
    """Return why ``model`` cannot load, or ``""``: a folder, the cache, or the hub's word."""
    from agents.loading import HUB_ID, is_local_path

    if Path(model).expanduser().exists():
        return ""  # a folder: what is wrong in it, the loader says
    if is_local_path(model):
        return f"no folder at {Path(model).expanduser().absolute()}"
    if not HUB_ID.fullmatch(model):
        return ""  # "default", "tiny", a bare name: the loader's own
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(model, "config.json")
    if isinstance(cached, str):
        return ""
    if _hub_offline():
        return "not in the Hugging Face cache, and HF_HUB_OFFLINE is set"
    from huggingface_hub import HfApi
    from huggingface_hub.utils import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError

    try:
        info = HfApi().model_info(model, timeout=HUB_TIMEOUT_S)
        if info.gated:  # the metadata is public: whether this account may download it
            HfApi().auth_check(model)
    except GatedRepoError:
        return "gated on the hub, and this account has no access"
    except RepositoryNotFoundError:
        return "no such model on the hub (or it is gated and you are not logged in)"
    except (HfHubHTTPError, OSError) as err:
        return f"the hub does not answer ({str(err).splitlines()[0] if str(err) else err})"
    return ""
