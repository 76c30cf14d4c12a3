"""Where the comparison's policies generate: locally, or through an OpenAI-compatible server.

With ``policy.server_command`` (e.g. ``vllm serve {model} --port {port}``) every stage
that samples from a saved policy (collection, SWEET-RL's candidates, ArCHer's value
samples, evaluation) serves that policy's folder with the command, started on first use
and stopped when the stage ends; with ``policy.server_base_url`` the stage's requests go
to a running server, naming the folder as the model. Training stays local: a policy whose
weights changed generates locally again (:meth:`agents.TransformersAgent.serve_from`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweetrl_gym.processes import process_state

if TYPE_CHECKING:
    from benchmarks.harness.experiment_config import ComparisonConfig

__all__ = ["generation", "served_folder"]

logger = logging.getLogger(__name__)

_LOCAL_ONLY = {
    "default": "the embedded default is a GGUF file loaded by transformers",
    "tiny": "the tiny test model is built in memory",
}


def served_folder(directory: Path) -> Path | None:
    """Return the folder a server loads for a policy saved by ``Algorithm.save``.

    The merged policy (``save_merged``) where there is one, else ``policy/``; ``None``
    when ``policy/`` holds only a LoRA adapter (a server needs a whole model).
    """
    if (directory / "policy-merged").is_dir():
        return directory / "policy-merged"
    if (directory / "policy" / "adapter_config.json").exists():
        return None
    return directory / "policy"


def model_source(config: ComparisonConfig) -> str | None:
    """Return what a server loads for the raw ``policy.model`` (``None``: not servable)."""
    from agents.loading import resolve_model_source

    model = config.policy.model
    if model in _LOCAL_ONLY:
        return None
    return resolve_model_source(model, "policy.model")


@contextlib.contextmanager
def generation(
    agent: Any, model: str | Path | None, config: ComparisonConfig, log_path: Path
) -> Iterator[Any]:
    """Let ``agent`` generate through the configured server for the block.

    Without ``policy.server_command`` or ``policy.server_base_url``, or for an agent that
    is not a local model, nothing changes.

    Args:
        agent: A policy (an :class:`agents.TransformersAgent`) whose weights are ``model``'s.
        model: The folder or hub id the server loads; ``None``: the policy cannot be
            served (it generates locally, and a line says why).
        config: The comparison config.
        log_path: Where a started server's output goes.

    Yields:
        The agent.

    """
    from agents import ServedModel, TransformersAgent
    from sweetrl_gym.lm import ChatClient, ModelServer

    settings = config.policy
    command, url = settings.server_command, settings.server_base_url
    if not (command or url) or not isinstance(agent, TransformersAgent):
        yield agent
        return
    if model is None:
        why = _LOCAL_ONLY.get(settings.model, "its folder holds only a LoRA adapter")
        logger.warning("this policy generates locally, not on the server: %s", why)
        yield agent
        return
    state = process_state()
    if command:
        name = log_path.name
        if state.num_processes > 1:  # a server per process, each on its own device
            name = f"{log_path.stem}-{state.process_index}.log"
        server = ModelServer(
            command,
            str(model),
            log_path=log_path.with_name(name),
            device=state.local_process_index,
        )
        served = ServedModel(server=server, max_concurrency=settings.server_concurrency)
    else:
        client = ChatClient(url, str(model))
        served = ServedModel(client, max_concurrency=settings.server_concurrency)
    agent.serve_from(served)
    try:
        yield agent
    finally:
        agent.serve_from(None)
        served.close()
