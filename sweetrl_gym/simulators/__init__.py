"""Simulated humans: the protocol and the offline rule-based default."""

from sweetrl_gym.simulators.base import Simulator, SimulatorError
from sweetrl_gym.simulators.cache import CachedSimulator
from sweetrl_gym.simulators.derive import facts_from_reference
from sweetrl_gym.simulators.matching import TOPICS
from sweetrl_gym.simulators.rule_based import RuleBasedSimulator

__all__ = [
    "TOPICS",
    "CachedSimulator",
    "RuleBasedSimulator",
    "Simulator",
    "SimulatorError",
    "facts_from_reference",
]
