"""Agents: the protocol, model-backed and scripted policies, rollouts and evaluation."""

from agents.base import Agent, Message, PrivilegedAgent
from agents.evaluation import bootstrap_ci, evaluate, summarize
from agents.openai_agent import OpenAIAgent
from agents.prompts import BACKEND_AGENT_PROMPT
from agents.rollout import Episode, collect, plan_episodes
from agents.scripted import HumanAgent, ImmediateAnswerAgent, OracleAgent, RandomAgent

__all__ = [
    "BACKEND_AGENT_PROMPT",
    "Agent",
    "Episode",
    "HumanAgent",
    "ImmediateAnswerAgent",
    "Message",
    "OpenAIAgent",
    "OracleAgent",
    "PrivilegedAgent",
    "RandomAgent",
    "bootstrap_ci",
    "collect",
    "evaluate",
    "plan_episodes",
    "summarize",
]
