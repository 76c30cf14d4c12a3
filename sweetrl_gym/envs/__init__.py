"""Gymnasium environments of ColBench."""

from sweetrl_gym.envs.backend import ColBenchBackendEnv, format_dialogue

__all__ = ["ColBenchBackendEnv", "format_dialogue"]
