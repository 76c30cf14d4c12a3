"""Simulated humans: the protocol, offline defaults (rule-based, visual), LLM and VLM ones."""

from sweetrl_gym.simulators.base import Simulator, SimulatorError, user_said
from sweetrl_gym.simulators.cache import CachedSimulator
from sweetrl_gym.simulators.derive import facts_from_reference
from sweetrl_gym.simulators.matching import TOPICS
from sweetrl_gym.simulators.openai_simulator import NO_RESPONSE, OpenAISimulator
from sweetrl_gym.simulators.openai_vision import (
    DESIGN_FEEDBACK_PROMPT,
    DESIGN_QUESTION_PROMPT,
    OpenAIVisionSimulator,
)
from sweetrl_gym.simulators.prompts import (
    HUMAN_SIMULATOR_PROMPT,
    PROMPT_FORMATS,
    read_official_prompt,
    simulator_messages,
)
from sweetrl_gym.simulators.rule_based import RuleBasedSimulator
from sweetrl_gym.simulators.skeleton import PageSketch, SectionSketch
from sweetrl_gym.simulators.transformers_simulator import TransformersSimulator
from sweetrl_gym.simulators.visual import VisualDiffSimulator

__all__ = [
    "DESIGN_FEEDBACK_PROMPT",
    "DESIGN_QUESTION_PROMPT",
    "HUMAN_SIMULATOR_PROMPT",
    "NO_RESPONSE",
    "PROMPT_FORMATS",
    "TOPICS",
    "CachedSimulator",
    "OpenAISimulator",
    "OpenAIVisionSimulator",
    "PageSketch",
    "RuleBasedSimulator",
    "SectionSketch",
    "Simulator",
    "SimulatorError",
    "TransformersSimulator",
    "VisualDiffSimulator",
    "facts_from_reference",
    "read_official_prompt",
    "simulator_messages",
    "user_said",
]
