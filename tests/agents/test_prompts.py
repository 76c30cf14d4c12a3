"""Agents take the prompt of the environment they play, unless they have their own."""

import gymnasium as gym

import agents
import sweetrl_gym  # noqa: F401 - registers the environments
from agents import (
    BACKEND_AGENT_PROMPT,
    FRONTEND_AGENT_PROMPT,
    ImmediateAnswerAgent,
    OracleAgent,
    RandomAgent,
    collect,
    describe_agent,
    evaluate,
    prompt_for,
    with_system_prompt,
)
from sweetrl_gym.envs import ColBenchBackendEnv, ColBenchFrontendEnv, agent_prompt_for
from sweetrl_gym.envs import agent_prompts as env_prompts


class PlainAgent:
    """A user's agent: only ``act``. Remembers every batch it was given."""

    def __init__(self):
        self.batches = []

    def act(self, batch):
        self.batches.append([list(messages) for messages in batch])
        return ["I WANT TO ANSWER: def f(): return None" for _ in batch]


class OwnPromptAgent(PlainAgent):
    """A user's agent that brings its own instructions."""

    own_system_prompt = True


def test_each_environment_names_its_agent_prompt():
    assert ColBenchBackendEnv.agent_prompt is BACKEND_AGENT_PROMPT
    assert ColBenchFrontendEnv.agent_prompt is FRONTEND_AGENT_PROMPT
    assert agent_prompt_for("ColBench-Backend-v0") == BACKEND_AGENT_PROMPT  # no env is made
    assert agent_prompt_for("ColBench-Frontend-v0") == FRONTEND_AGENT_PROMPT
    assert agent_prompt_for(ColBenchFrontendEnv) == FRONTEND_AGENT_PROMPT
    env = gym.make("ColBench-Backend-v0", split="test")  # wrapped by gym.make
    assert agent_prompt_for(env) == BACKEND_AGENT_PROMPT
    env.close()
    assert agent_prompt_for(object()) is None
    # The texts live with the environments; agents re-exports the same objects.
    for name in env_prompts.__all__[:4]:
        assert getattr(agents, name) is getattr(env_prompts, name)


def test_who_gets_the_environments_prompt():
    assert prompt_for(PlainAgent(), "ColBench-Frontend-v0") == FRONTEND_AGENT_PROMPT
    for scripted in (OracleAgent(), ImmediateAnswerAgent(), RandomAgent(), agents.HumanAgent()):
        assert prompt_for(scripted, "ColBench-Frontend-v0") is None  # they read no prompt
    assert prompt_for(OwnPromptAgent(), "ColBench-Backend-v0") is None


def test_with_system_prompt_leaves_a_conversations_own_system_message():
    chat = [{"role": "user", "content": "hi"}]
    assert with_system_prompt(chat, "P") == [{"role": "system", "content": "P"}, *chat]
    assert chat == [{"role": "user", "content": "hi"}]  # not changed in place
    own = [{"role": "system", "content": "mine"}, *chat]
    assert with_system_prompt(own, "P") == own
    assert with_system_prompt(chat, None) == chat


def test_a_plain_agent_gets_the_prompt_and_the_buffer_stays_as_the_env_has_it(small_tasks):
    agent = PlainAgent()
    env_kwargs = {"tasks": small_tasks[:2]}
    buffer = collect("ColBench-Backend-v0", agent, 2, env_kwargs=env_kwargs, progress=False)
    for batch in agent.batches:
        for messages in batch:
            assert messages[0] == {"role": "system", "content": BACKEND_AGENT_PROMPT}
            assert messages[1]["role"] == "user"
    for trajectory in buffer:  # the stored training data hold no system message
        assert all(m["role"] != "system" for m in trajectory.messages)
        assert all(m["role"] != "system" for t in trajectory.turns for m in t.messages)
    # An agent with its own prompt gets the conversation as the environment has it.
    own = OwnPromptAgent()
    evaluate(own, num_tasks=1, env_kwargs=env_kwargs, progress=False)
    assert own.batches[0][0][0]["role"] == "user"


def test_a_plain_agent_gets_the_frontend_prompt_on_the_frontend(bakery_page_env):
    agent = PlainAgent()
    evaluate(agent, "ColBench-Frontend-v0", env_kwargs=bakery_page_env, progress=False)
    assert agent.batches[0][0][0] == {"role": "system", "content": FRONTEND_AGENT_PROMPT}


def test_the_prompt_reaches_the_agent_in_sweetrl_play(capsys, monkeypatch):
    import benchmarks.cli as cli

    agent = PlainAgent()
    monkeypatch.setattr(cli, "make_agent", lambda *args, **kwargs: agent)
    assert cli.main(["play", "--agent", "mine", "--task-index", "0"]) == 0
    assert "reward" in capsys.readouterr().out
    assert agent.batches[0][0][0] == {"role": "system", "content": BACKEND_AGENT_PROMPT}


def test_model_agents_record_that_they_take_the_environments_prompt():
    from sweetrl_gym.lm import ChatClient

    client = ChatClient("http://localhost:8000/v1", "policy")
    default = agents.OpenAIAgent(client)
    assert not default.own_system_prompt and default.system_prompt == BACKEND_AGENT_PROMPT
    assert describe_agent(default)["system_prompt"] == "environment"
    own = agents.OpenAIAgent(client, system_prompt="Be brief.")
    assert own.own_system_prompt and describe_agent(own)["system_prompt"] == "Be brief."
    assert agents.OpenAIAgent(client, system_prompt=None).own_system_prompt  # none at all
    default.system_prompt = "Changed."  # set later: its own from then on
    assert default.own_system_prompt and prompt_for(default, "ColBench-Backend-v0") is None
    assert repr(agents.ENVIRONMENT_PROMPT) == "ENVIRONMENT_PROMPT"
