"""sweetrl-gym: ColBench collaborative tasks as Gymnasium environments.

``import sweetrl_gym`` registers ``ColBench-Backend-v0``::

    import gymnasium as gym
    import sweetrl_gym

    env = gym.make("ColBench-Backend-v0", split="test")
    obs, info = env.reset(seed=0)

This package never imports torch: environments stay light.
"""

from gymnasium.envs.registration import register, registry

from sweetrl_gym.actions import ANSWER_MARKER, OUTPUT_MARKER, parse_action, strip_code_fences
from sweetrl_gym.envs import ColBenchBackendEnv, format_dialogue
from sweetrl_gym.sandbox import Sandbox, TestReport, run_tests
from sweetrl_gym.simulators import (
    CachedSimulator,
    OpenAISimulator,
    RuleBasedSimulator,
    Simulator,
    SimulatorError,
    TransformersSimulator,
)
from sweetrl_gym.spaces import Utterance
from sweetrl_gym.tasks import BackendTask, HiddenFact, load_backend_tasks
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__version__ = "0.1.0"

__all__ = [
    "ANSWER_MARKER",
    "OUTPUT_MARKER",
    "BackendTask",
    "CachedSimulator",
    "ColBenchBackendEnv",
    "HiddenFact",
    "OpenAISimulator",
    "RuleBasedSimulator",
    "Sandbox",
    "Simulator",
    "SimulatorError",
    "TestReport",
    "Trajectory",
    "TrajectoryBuffer",
    "TransformersSimulator",
    "Turn",
    "Utterance",
    "__version__",
    "format_dialogue",
    "load_backend_tasks",
    "parse_action",
    "run_tests",
    "strip_code_fences",
]

if "ColBench-Backend-v0" not in registry:
    register(id="ColBench-Backend-v0", entry_point="sweetrl_gym.envs.backend:ColBenchBackendEnv")
