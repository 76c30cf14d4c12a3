import logging

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from sweetrl_gym.lm import ChatAPIError, ChatClient
from sweetrl_gym.simulators import SimulatorError
from sweetrl_gym.simulators.openai_simulator import NO_RESPONSE, OpenAISimulator
from sweetrl_gym.simulators.prompts import HUMAN_SIMULATOR_PROMPT
from tests.conftest import make_tasks
from tests.fake_openai import FakeOpenAI, fast_client

TASK = make_tasks(1, seed=3)[0]


def dialogue(*agent_and_human):
    messages = [{"role": "user", "content": TASK.problem_description}]
    for i, text in enumerate(agent_and_human):
        messages.append({"role": "assistant" if i % 2 == 0 else "user", "content": text})
    return messages


def make_sim(server, **kwargs):
    return OpenAISimulator(fast_client(server.base_url, "human-70b", kwargs), **kwargs)


@pytest.fixture
def server():
    with FakeOpenAI(lambda messages: f"You asked: {messages[-1]['content']}") as fake:
        yield fake


def test_implements_the_protocol_with_official_settings(server):
    sim = make_sim(server)
    assert sim.name.startswith("openai:human-70b(")  # caches key its replies by it
    assert sim.reply(TASK, dialogue("What is the name?")) == "You asked: What is the name?"
    body = server.requests[0].body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("human-70b", 0.0, 256)


def test_the_model_sees_the_hidden_information_and_plays_the_user(server):
    make_sim(server).reply(TASK, dialogue("Q1?", "A1.", "Q2?"))
    chat = server.requests[0].body["messages"]
    assert chat[0]["role"] == "system" and TASK.ground_truth in chat[0]["content"]
    assert "{hidden_information}" not in chat[0]["content"]
    assert chat[1:] == [
        {"role": "assistant", "content": TASK.problem_description},
        {"role": "user", "content": "Q1?"},
        {"role": "assistant", "content": "A1."},
        {"role": "user", "content": "Q2?"},
    ]


def test_name_changes_with_prompt_and_temperature():
    url = "http://localhost:8000/v1"
    base = OpenAISimulator(ChatClient(url, "m"))
    assert base.name == OpenAISimulator(ChatClient(url, "m")).name and "m" in base.name
    custom = HUMAN_SIMULATOR_PROMPT + "Be terse.\n"
    others = {
        OpenAISimulator(ChatClient(url, "m"), prompt=custom).name,
        OpenAISimulator(ChatClient(url, "m"), temperature=0.7).name,
        OpenAISimulator(ChatClient(url, "m2")).name,
    }
    assert base.name not in others and len(others) == 3


def test_transient_failures_are_retried(server):
    server.fail("503", times=2)
    server.fail("malformed_json")
    assert make_sim(server, max_retries=3).reply(TASK, dialogue("Hi?")) == "You asked: Hi?"


@pytest.mark.parametrize(("fault", "retries"), [("500", 3), ("401", 1)])
def test_a_failing_endpoint_raises_simulator_error(server, fault, retries):
    server.fail(fault, times=3)
    with pytest.raises(SimulatorError, match=f"human-70b.*HTTP {fault}") as caught:
        make_sim(server, max_retries=2).reply(TASK, dialogue("Hi?"))
    assert isinstance(caught.value.__cause__, ChatAPIError)
    assert "on_error='no_response'" in str(caught.value)
    assert len(server.requests) == retries


def test_no_response_fallback_is_opt_in_and_logged(server, caplog):
    server.fail("500", times=2)
    sim = make_sim(server, max_retries=1, on_error="no_response")
    with caplog.at_level(logging.WARNING, logger="sweetrl_gym.simulators.openai_simulator"):
        assert sim.reply(TASK, dialogue("Hi?")) == NO_RESPONSE == "No response."
    assert "HTTP 500" in caplog.text
    assert sim.reply(TASK, dialogue("Again?")) == "You asked: Again?"


def test_timeout_is_a_simulator_error(server):
    server.fail("delay", delay_s=5.0)
    with pytest.raises(SimulatorError, match="timed out"):
        make_sim(server, timeout_s=0.2, max_retries=0).reply(TASK, dialogue("Hi?"))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"on_error": "ignore"}, "on_error"),
        ({"prompt": "You are a user."}, "hidden_information"),
        ({"temperature": -1}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
def test_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OpenAISimulator(ChatClient("http://localhost:8000/v1", "m"), **kwargs)


def test_empty_dialogue_is_rejected(server):
    with pytest.raises(ValueError, match="agent's message"):
        make_sim(server).reply(TASK, [])
    assert server.requests == []


def test_a_full_episode_with_replies_from_the_server(sandbox):
    long_reply = "x" * 1000

    def human(messages):
        question = messages[-1]["content"]
        return long_reply if "long" in question else f"The function is named after {question}"

    tasks = make_tasks(2)
    with FakeOpenAI(human) as server:
        env = gym.make(
            "ColBench-Backend-v0",
            tasks=tasks,
            simulator=make_sim(server),
            sandbox=sandbox,
        )
        obs, _ = env.reset(options={"task_index": 1})
        assert obs == tasks[1].problem_description
        obs, reward, terminated, _, info = env.step("Thoughts...\nOUTPUT: the name?")
        assert obs == "The function is named after the name?" and not terminated
        obs, _, _, _, info = env.step("Say something long")
        assert obs == "x" * 400  # the env cuts replies to the official length
        obs, reward, terminated, _, info = env.step(f"I WANT TO ANSWER: {tasks[1].ground_truth}")
        assert terminated and reward == 1.0 and info["success"]
        chats = [r.body["messages"] for r in server.requests]
        env.close()
    assert len(chats) == 2
    assert all(tasks[1].ground_truth in chat[0]["content"] for chat in chats)
    assert chats[1][-1] == {"role": "user", "content": "Say something long"}
    assert chats[1][-2] == {"role": "assistant", "content": "The function is named after the name?"}
    assert info["messages"][-2]["content"] == "x" * 400


def test_the_official_rule_answers_no_response_on_http_400_only(server):
    sim = make_sim(server, max_retries=1, on_error="official")
    server.fail(
        "400"
    )  # a refused request (e.g. past the model's context): the official code goes on
    assert sim.reply(TASK, dialogue("Hi?")) == NO_RESPONSE
    server.fail("500", times=2)  # a server that fails: the official code stops
    with pytest.raises(SimulatorError, match=r"at http://127\.0\.0\.1:\d+/v1 could not reply"):
        sim.reply(TASK, dialogue("Hi?"))
    with pytest.raises(ValueError, match="on_error must be one of"):
        make_sim(server, on_error="sometimes")
