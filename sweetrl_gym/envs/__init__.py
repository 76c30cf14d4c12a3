"""Gymnasium environments of ColBench."""

from sweetrl_gym.envs.agent_prompts import agent_prompt_for
from sweetrl_gym.envs.backend import ColBenchBackendEnv
from sweetrl_gym.envs.collaborative import CollaborativeEnv, format_dialogue
from sweetrl_gym.envs.frontend import ColBenchFrontendEnv

__all__ = [
    "ColBenchBackendEnv",
    "ColBenchFrontendEnv",
    "CollaborativeEnv",
    "agent_prompt_for",
    "format_dialogue",
]
