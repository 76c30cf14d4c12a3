import gymnasium as gym

import sweetrl_gym  # noqa: F401
from agents import Agent, ImmediateAnswerAgent, OracleAgent, PrivilegedAgent
from benchmarks.demo import play


def test_protocols():
    assert isinstance(ImmediateAnswerAgent(), Agent)
    assert isinstance(OracleAgent(), PrivilegedAgent) and OracleAgent.privileged


def test_oracle_reaches_every_fact_and_succeeds(small_tasks):
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks)
    for index, task in enumerate(small_tasks):
        reward, info = play(env, OracleAgent(), index)
        assert reward == 1.0 and info["success"]
        told = " ".join(m["content"] for m in info["messages"] if m["role"] == "user")
        assert all(fact.answer in told for fact in task.facts)
        assert info["turn"] == len(task.facts) + 1


def test_oracle_packs_questions_into_short_turn_limits(small_tasks):
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=3)
    reward, info = play(env, OracleAgent(max_turns=3), 0)
    assert info["turn"] == 3 and not info["turn_limit_reached"] and reward == 1.0


def test_immediate_answer_uses_a_stated_signature_and_fails():
    agent = ImmediateAnswerAgent()
    reply = agent.act([[{"role": "user", "content": "Help. The function should be `f(a, b)`."}]])[0]
    assert reply.startswith("I WANT TO ANSWER:") and "def f(a, b):" in reply
    assert "def solution(*args):" in agent.act([[{"role": "user", "content": "Help me."}]])[0]
