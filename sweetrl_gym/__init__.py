"""sweetrl-gym: ColBench collaborative tasks as Gymnasium environments.

``import sweetrl_gym`` registers ``ColBench-Backend-v0`` and ``ColBench-Frontend-v0``::

    import gymnasium as gym
    import sweetrl_gym

    env = gym.make("ColBench-Backend-v0", split="test")
    obs, info = env.reset(seed=0)

This package never imports torch (environments stay light) and changes no setting of the
process. The LLM runtime the simulators, agents and judges share is :mod:`sweetrl_gym.lm`.
"""

from gymnasium.envs.registration import register, registry

from sweetrl_gym.actions import (
    ANSWER_MARKER,
    OUTPUT_MARKER,
    extract_html,
    parse_action,
    strip_code_fences,
)
from sweetrl_gym.envs import ColBenchBackendEnv, ColBenchFrontendEnv, format_dialogue
from sweetrl_gym.sandbox import Sandbox, TestReport, run_tests
from sweetrl_gym.simulators import (
    CachedSimulator,
    OpenAISimulator,
    OpenAIVisionSimulator,
    RuleBasedSimulator,
    Simulator,
    SimulatorError,
    TransformersSimulator,
    VisualDiffSimulator,
)
from sweetrl_gym.spaces import Utterance
from sweetrl_gym.tasks import (
    BackendTask,
    FrontendTask,
    HiddenFact,
    load_backend_tasks,
    load_frontend_tasks,
)
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

__version__ = "0.1.0"

__all__ = [
    "ANSWER_MARKER",
    "OUTPUT_MARKER",
    "BackendTask",
    "CachedSimulator",
    "ColBenchBackendEnv",
    "ColBenchFrontendEnv",
    "FrontendTask",
    "HiddenFact",
    "OpenAISimulator",
    "OpenAIVisionSimulator",
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
    "VisualDiffSimulator",
    "__version__",
    "extract_html",
    "format_dialogue",
    "load_backend_tasks",
    "load_frontend_tasks",
    "parse_action",
    "run_tests",
    "strip_code_fences",
]

if "ColBench-Backend-v0" not in registry:
    register(id="ColBench-Backend-v0", entry_point="sweetrl_gym.envs.backend:ColBenchBackendEnv")
if "ColBench-Frontend-v0" not in registry:
    register(id="ColBench-Frontend-v0", entry_point="sweetrl_gym.envs.frontend:ColBenchFrontendEnv")
