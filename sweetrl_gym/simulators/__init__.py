"""Simulated humans: the protocol, the offline rule-based default, LLM-backed ones, a cache."""

from sweetrl_gym.simulators.base import Simulator, SimulatorError
from sweetrl_gym.simulators.cache import CachedSimulator
from sweetrl_gym.simulators.derive import facts_from_reference
from sweetrl_gym.simulators.matching import TOPICS
from sweetrl_gym.simulators.openai_simulator import NO_RESPONSE, OpenAISimulator
from sweetrl_gym.simulators.prompts import HUMAN_SIMULATOR_PROMPT, simulator_messages
from sweetrl_gym.simulators.rule_based import RuleBasedSimulator
from sweetrl_gym.simulators.transformers_simulator import TransformersSimulator

__all__ = [
    "HUMAN_SIMULATOR_PROMPT",
    "NO_RESPONSE",
    "TOPICS",
    "CachedSimulator",
    "OpenAISimulator",
    "RuleBasedSimulator",
    "Simulator",
    "SimulatorError",
    "TransformersSimulator",
    "facts_from_reference",
    "simulator_messages",
]
