"""Agents: the protocol and scripted baselines (model-backed agents come next)."""

from agents.base import Agent, Message, PrivilegedAgent
from agents.scripted import ImmediateAnswerAgent, OracleAgent

__all__ = ["Agent", "ImmediateAnswerAgent", "Message", "OracleAgent", "PrivilegedAgent"]
