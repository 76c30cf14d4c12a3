"""Agents: the protocol, model-backed and scripted policies, rollouts, evaluation and statistics."""

from agents.base import Agent, Message, PrivilegedAgent
from agents.collaborator import ScriptedCollaborator
from agents.default_model import (
    DEFAULT_MODEL_NAME,
    DefaultModelNotInstalled,
    load_default_agent,
    load_default_model,
)
from agents.description import describe_agent
from agents.evaluation import evaluate, summarize
from agents.frontend_collaborator import FrontendCollaborator
from agents.loading import load_causal_lm
from agents.openai_agent import OpenAIAgent
from agents.prompts import (
    BACKEND_AGENT_PROMPT,
    ENVIRONMENT_PROMPT,
    FRONTEND_AGENT_PROMPT,
    SHORT_BACKEND_AGENT_PROMPT,
    SHORT_FRONTEND_AGENT_PROMPT,
    prompt_for,
    with_system_prompt,
)
from agents.resolve import agent_entry_points, is_agent_spec, load_agent
from agents.rollout import Episode, collect, plan_episodes
from agents.scripted import HumanAgent, ImmediateAnswerAgent, OracleAgent, RandomAgent
from agents.served import ServedModel
from agents.statistics import (
    SIMILARITY_MARGIN,
    Estimate,
    Interval,
    PairedDifference,
    PooledDifference,
    SeedsNeeded,
    SeedSpread,
    SeedTaskInterval,
    bootstrap_ci,
    paired_difference,
    pooled_paired_difference,
    seed_task_interval,
    seeds_needed,
)
from agents.transformers_agent import TransformersAgent

__all__ = [
    "BACKEND_AGENT_PROMPT",
    "DEFAULT_MODEL_NAME",
    "ENVIRONMENT_PROMPT",
    "FRONTEND_AGENT_PROMPT",
    "SHORT_BACKEND_AGENT_PROMPT",
    "SHORT_FRONTEND_AGENT_PROMPT",
    "SIMILARITY_MARGIN",
    "Agent",
    "DefaultModelNotInstalled",
    "Episode",
    "Estimate",
    "FrontendCollaborator",
    "HumanAgent",
    "ImmediateAnswerAgent",
    "Interval",
    "Message",
    "OpenAIAgent",
    "OracleAgent",
    "PairedDifference",
    "PooledDifference",
    "PrivilegedAgent",
    "RandomAgent",
    "ScriptedCollaborator",
    "SeedSpread",
    "SeedTaskInterval",
    "SeedsNeeded",
    "ServedModel",
    "TransformersAgent",
    "agent_entry_points",
    "bootstrap_ci",
    "collect",
    "describe_agent",
    "evaluate",
    "is_agent_spec",
    "load_agent",
    "load_causal_lm",
    "load_default_agent",
    "load_default_model",
    "paired_difference",
    "plan_episodes",
    "pooled_paired_difference",
    "prompt_for",
    "seed_task_interval",
    "seeds_needed",
    "summarize",
    "with_system_prompt",
]
