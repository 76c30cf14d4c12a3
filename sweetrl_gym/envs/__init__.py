"""Gymnasium environments of ColBench."""

from sweetrl_gym.envs.backend import ColBenchBackendEnv
from sweetrl_gym.envs.collaborative import CollaborativeEnv, format_dialogue
from sweetrl_gym.envs.frontend import ColBenchFrontendEnv

__all__ = ["ColBenchBackendEnv", "ColBenchFrontendEnv", "CollaborativeEnv", "format_dialogue"]
