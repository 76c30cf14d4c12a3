import inspect
import threading

import pytest

from agents.openai_agent import OpenAIAgent
from agents.prompts import BACKEND_AGENT_PROMPT
from sweetrl_gym.lm import ChatAPIError, ChatClient
from tests.fake_openai import FakeOpenAI, echo, fast_client


def conversation(i):
    return [{"role": "user", "content": f"task {i}"}]


def make_agent(server, **kwargs):
    return OpenAIAgent(fast_client(server.base_url, "policy", kwargs), **kwargs)


def test_is_a_plain_agent():
    agent = OpenAIAgent(ChatClient("http://localhost:8000/v1", "policy"))
    # The rollout hands references only to an agent whose `privileged` is true; its act
    # takes none. (isinstance on the runtime-checkable protocols only checks attributes.)
    assert not getattr(agent, "privileged", False)
    assert list(inspect.signature(agent.act).parameters) == ["batch"]
    assert agent.name == "openai:policy"


def test_sends_the_system_prompt_and_official_sampling_settings():
    with FakeOpenAI() as server:
        assert make_agent(server).act([conversation(0)]) == ["echo: task 0"]
        body = server.requests[0].body
    assert body["messages"] == [
        {"role": "system", "content": BACKEND_AGENT_PROMPT},
        *conversation(0),
    ]
    assert (body["model"], body["temperature"], body["top_p"], body["max_tokens"]) == (
        "policy",
        1.0,
        1.0,
        1024,
    )


def test_without_a_system_prompt_the_chat_is_sent_as_is():
    chat = [*conversation(1), {"role": "assistant", "content": "?"}, conversation(2)[0]]
    with FakeOpenAI() as server:
        make_agent(server, system_prompt=None, temperature=0.5, max_tokens=8).act([chat])
        body = server.requests[0].body
    assert body["messages"] == chat
    assert (body["temperature"], body["max_tokens"]) == (0.5, 8)


def test_a_batch_runs_concurrently_and_keeps_its_order():
    batch = 8
    # Every request waits until all 8 are in the server at once: serial requests would
    # break the barrier (and get HTTP 500).
    barrier = threading.Barrier(batch, timeout=10)

    def reply(messages):
        barrier.wait()
        return messages[-1]["content"].upper()

    with FakeOpenAI(reply) as server:
        replies = make_agent(server, max_retries=0).act([conversation(i) for i in range(batch)])
        assert server.max_in_flight == batch
    assert replies == [f"TASK {i}" for i in range(batch)]


def test_max_concurrency_bounds_requests_in_flight():
    # Requests pass in groups of 3 that must all be in the server at once, so the test
    # does not depend on timing: fewer in flight breaks the barrier (HTTP 500).
    barrier = threading.Barrier(3, timeout=10)

    def reply(messages):
        barrier.wait()
        return echo(messages)

    with FakeOpenAI(reply) as server:
        agent = make_agent(server, max_concurrency=3, max_retries=0)
        replies = agent.act([conversation(i) for i in range(9)])
        assert 1 < server.max_in_flight <= 3
    assert replies == [f"echo: task {i}" for i in range(9)]


def test_transient_failures_inside_a_batch_are_retried():
    with FakeOpenAI() as server:
        server.fail("503", times=2)
        server.fail("disconnect")
        replies = make_agent(server).act([conversation(i) for i in range(4)])
        assert len(server.requests) == 7
    assert replies == [f"echo: task {i}" for i in range(4)]


def test_a_failed_conversation_is_named():
    def reply(messages):
        if messages[-1]["content"] == "task 2":
            raise RuntimeError("model crashed")
        return "ok"

    with FakeOpenAI(reply) as server:
        agent = make_agent(server, max_retries=1)
        with pytest.raises(ChatAPIError, match="conversation 2 of the batch \\(4\\)") as caught:
            agent.act([conversation(i) for i in range(4)])
    err = caught.value
    assert err.status == 500 and err.attempts == 2 and "model crashed" in str(err)
    assert isinstance(err.__cause__, ChatAPIError)


def test_a_wrong_key_fails_the_batch_without_retries():
    with FakeOpenAI() as server:
        server.fail("401")
        with pytest.raises(ChatAPIError, match="Incorrect API key"):
            make_agent(server, max_concurrency=1, max_retries=5).act(
                [conversation(i) for i in range(3)]
            )
        # Fail fast: requests not yet started are dropped.
        assert [r.fault for r in server.requests] == ["401"]


def test_empty_batch_and_invalid_conversations():
    with FakeOpenAI() as server:
        agent = make_agent(server)
        assert agent.act([]) == []
        with pytest.raises(ValueError, match="conversation 1 of the batch"):
            agent.act([conversation(0), []])
        with pytest.raises(TypeError, match="list of conversations"):
            agent.act("hello")
        assert server.requests == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"temperature": -0.1}, "temperature"),
        ({"system_prompt": 3}, "system_prompt"),
    ],
)
def test_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OpenAIAgent(ChatClient("http://localhost:8000/v1", "policy"), **kwargs)


def test_one_client_is_shared_by_the_agent_and_the_simulated_human():
    from sweetrl_gym.simulators import OpenAISimulator

    with FakeOpenAI() as server:
        client = ChatClient(server.base_url, "one-model", api_key="sk-shared")
        agent, human = OpenAIAgent(client), OpenAISimulator(client)
        assert agent.client is human.client is client
        assert agent.act([conversation(0)]) == ["echo: task 0"]
        task = {"ground_truth": "def f(): return 1"}
        assert human.reply(
            task, [{"role": "user", "content": "Write f."}, {"role": "assistant", "content": "Hi?"}]
        )
        assert [r.headers["authorization"] for r in server.requests] == ["Bearer sk-shared"] * 2
        assert {r.body["model"] for r in server.requests} == {"one-model"}
    with pytest.raises(TypeError, match="client must be a ChatClient"):
        OpenAIAgent("http://localhost:8000/v1")


def test_on_the_frontend_it_sends_the_frontend_prompt_unless_given_its_own(bakery_page_env):
    from agents import FRONTEND_AGENT_PROMPT, evaluate

    kwargs = bakery_page_env
    with FakeOpenAI() as server:
        evaluate(make_agent(server), "ColBench-Frontend-v0", env_kwargs=kwargs, progress=False)
        custom = make_agent(server, system_prompt="Design pages.")
        evaluate(custom, "ColBench-Frontend-v0", env_kwargs=kwargs, progress=False)
        sent = [request.body["messages"] for request in server.requests]
    request = {"role": "user", "content": "I need a page for my bakery."}
    assert sent[0] == [{"role": "system", "content": FRONTEND_AGENT_PROMPT}, request]
    assert sent[1] == [{"role": "system", "content": "Design pages."}, request]


def test_a_conversations_own_system_message_is_sent_instead_of_the_agents():
    own = [{"role": "system", "content": "Be brief."}, *conversation(0)]
    with FakeOpenAI() as server:
        make_agent(server).act([own])
        make_agent(server, system_prompt="Mine.").act([own])
        assert [request.body["messages"] for request in server.requests] == [own, own]
