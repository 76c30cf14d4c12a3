"""The policies of a comparison: the raw model, the warm start's clone, saved policies.

Every method starts from a fresh copy of the same base policy (:func:`base_policy`): the
raw model the config names (:func:`build_policy`) or, with a warm start, its
behaviour-cloned copy saved under ``methods/warm-start``. Scripted agents
(:func:`scripted_agent`) are the warm start's demonstrators and the command line's
reference agents.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents import TransformersAgent
    from benchmarks.harness.experiment_config import ComparisonConfig

__all__ = [
    "WARM_START",
    "WARM_START_ALGORITHM",
    "ZERO_SHOT",
    "base_policy",
    "build_policy",
    "saved_policy",
    "scripted_agent",
    "system_prompt",
]

_FRONTEND = "ColBench-Frontend-v0"
# The warm start's name: its fit in methods/warm-start, its evaluation in eval/warm-start.jsonl.
WARM_START = "warm-start"
"""The warm start's name in run folders and reports (a behaviour clone of a demonstrator)."""
WARM_START_ALGORITHM = "bc"
"""The algorithm that makes the warm start: behaviour cloning."""
ZERO_SHOT = "zero-shot"
"""The untrained base policy's name in ``methods.run`` and reports."""


def build_policy(config: ComparisonConfig, *, evaluation: bool = False) -> TransformersAgent:
    """Return a fresh base policy (an ``agents.TransformersAgent``) as the config describes.

    ``policy.model`` is ``"default"`` (the embedded SmolLM2-135M), ``"tiny"`` (a
    random-init test model), a local model folder or a Hugging Face hub id (read by
    ``from_pretrained``; ``HF_HUB_OFFLINE=1`` keeps it to the local cache).
    ``policy.dtype`` (``"auto"``: the checkpoint's own) and ``policy.device``
    (``"auto"``: this process's ``accelerate`` device) say where and how it is loaded.

    Args:
        config: The whole comparison config.
        evaluation: Sample at ``policy.eval_temperature`` (else ``policy.temperature``).

    Raises:
        FileNotFoundError: If ``policy.model`` is a path that does not exist.
        OSError: If a hub id cannot be loaded (the message says what to check).

    """
    from agents import TransformersAgent, load_causal_lm, load_default_agent
    from agents.dtypes import torch_dtype
    from agents.loading import DEFAULT_MODEL

    policy = config.policy
    settings = {
        "temperature": policy.eval_temperature if evaluation else policy.temperature,
        "max_new_tokens": policy.max_new_tokens,
        "batch_size": policy.batch_size,
        "seed": config.seed,
        "device": None if policy.device == "auto" else policy.device,
        "system_prompt": system_prompt(config),
        "history": policy.history,
    }
    dtype, model = policy.dtype, policy.model
    if model == DEFAULT_MODEL:  # the agent's dtype default: bf16 where it is native
        return load_default_agent(**settings, **({} if dtype == "auto" else {"dtype": dtype}))
    if model == "tiny":
        from agents.tiny_model import make_tiny_lm

        lm, tokenizer = make_tiny_lm(seed=config.seed)
        if dtype != "auto":
            lm = lm.to(torch_dtype(dtype))
        return TransformersAgent(lm, tokenizer, **settings)
    lm, tokenizer = load_causal_lm(model, dtype=dtype, what="policy.model")
    return TransformersAgent(lm, tokenizer, **settings)


def system_prompt(config: ComparisonConfig) -> str:
    """Return the agent's system prompt that ``policy.system_prompt`` names.

    ``"full"``: the agent prompt of the environment; ``"short"``: its one-line form
    (which names no turn limit); anything else is the prompt's own text. A
    ``policy.system_prompt_file`` gives the prompt as a file's whole text instead (the
    official agent prompt is used as it is, its unfilled ``{dialogue_history}`` too).

    Raises:
        FileNotFoundError: If ``policy.system_prompt_file`` names no file (the message
            names the official one).

    """
    from agents import prompts

    frontend = config.env.id == _FRONTEND
    path = config.policy.system_prompt_file
    if path:
        if not Path(path).is_file():
            from sweetrl_gym.official_data import AGENT_PROMPT_FILES, REPOSITORY

            official = AGENT_PROMPT_FILES["frontend" if frontend else "backend"]
            raise FileNotFoundError(
                f"policy.system_prompt_file: no file at {path} (the official agent prompt is "
                f"{official} of {REPOSITORY})"
            )
        return Path(path).read_text(encoding="utf-8")
    choice = config.policy.system_prompt
    named = {
        ("full", False): prompts.BACKEND_AGENT_PROMPT,
        ("short", False): prompts.SHORT_BACKEND_AGENT_PROMPT,
        ("full", True): prompts.FRONTEND_AGENT_PROMPT,
        ("short", True): prompts.SHORT_FRONTEND_AGENT_PROMPT,
    }
    return named.get((choice, frontend), choice)


def base_policy(
    config: ComparisonConfig, out: Path, *, evaluation: bool = False
) -> TransformersAgent:
    """Return a fresh copy of the policy every method starts from.

    With a warm start (``warm_start.demonstrator``), the behaviour-cloned model saved
    under ``out/methods/warm-start``; without one, the raw model (:func:`build_policy`).
    """
    if not config.warm_start.demonstrator:
        return build_policy(config, evaluation=evaluation)
    return saved_policy(out / "methods" / WARM_START / "model", config, evaluation=evaluation)


def saved_policy(
    directory: Path, config: ComparisonConfig, *, evaluation: bool = False
) -> TransformersAgent:
    """Load a policy saved by ``Algorithm.save`` with the config's sampling and dtype."""
    from agents.dtypes import torch_dtype
    from algorithms import Algorithm

    policy = Algorithm.load(directory).policy
    settings = config.policy
    policy.temperature = float(settings.eval_temperature if evaluation else settings.temperature)
    policy.max_new_tokens = settings.max_new_tokens
    policy.batch_size = settings.batch_size
    policy.history = settings.history
    if settings.dtype != "auto":
        # Training keeps fp32 master weights; sampling runs in the configured dtype.
        policy.model.to(torch_dtype(settings.dtype))
    return policy


def scripted_agent(name: str, config: ComparisonConfig) -> Any:
    """Return the scripted agent ``name`` for ``config``.

    ``oracle``, ``random``, ``immediate`` or ``collaborator`` (the warm start's
    demonstrator: on the Backend, asking each detail with ``warm_start.ask_probability``;
    on the Frontend, the :class:`~agents.FrontendCollaborator`, asking about the design
    with ``ask_probability`` and applying what it is told with ``apply_probability``).
    """
    from agents import (
        FrontendCollaborator,
        ImmediateAnswerAgent,
        OracleAgent,
        RandomAgent,
        ScriptedCollaborator,
    )

    max_turns = config.env.max_turns
    if name == "collaborator":
        section, seed = config.warm_start, config.seed
        if config.env.id == _FRONTEND:
            applies: dict[str, float] = {}
            if section.apply_probability is not None:  # else the collaborator's own
                applies["apply_probability"] = section.apply_probability
            return FrontendCollaborator(
                section.ask_probability, max_turns=max_turns, seed=seed, **applies
            )
        return ScriptedCollaborator(section.ask_probability, max_turns=max_turns, seed=seed)
    if name == "oracle":
        return OracleAgent(max_turns=max_turns)
    if name == "random":
        return RandomAgent(max_turns=max_turns, seed=config.seed)
    if name == "immediate":
        return ImmediateAnswerAgent()
    raise ValueError(
        f"no scripted agent {name!r}; choose oracle, random, immediate or collaborator"
    )
