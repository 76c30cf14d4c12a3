"""Generation through an OpenAI-compatible server: the fake one, and a real ``transformers serve``."""

import logging
import sys

import gymnasium as gym
import pytest
import torch

from agents import ServedModel, TransformersAgent, collect
from sweetrl_gym.lm import ChatAPIError, ModelServer
from sweetrl_gym.trajectory import TrajectoryBuffer
from tests.fake_openai import FakeOpenAI, fast_client
from tests.tiny_lm import make_tiny_lm


def served(server, **kwargs):
    return ServedModel(fast_client(server.base_url, "policy-folder", {}), **kwargs)


def tiny_agent(**kwargs):
    model, tokenizer = make_tiny_lm(seed=0)
    settings = {"temperature": 1.0, "max_new_tokens": 12, "batch_size": 4, "seed": 3}
    return TransformersAgent(model, tokenizer, **{**settings, **kwargs})


def test_prompt_completions_carry_n_sampling_and_summed_logprobs():
    with FakeOpenAI() as server:
        client = fast_client(server.base_url, "policy-folder", {})
        completions = client.complete_prompt(
            "<prompt>", n=3, temperature=0.5, top_p=0.9, max_tokens=7, seed=11, logprobs=True
        )
        body = server.requests[0].body
    assert server.requests[0].path == "/v1/completions"
    assert [c.text for c in completions] == ["0: <prompt>", "1: <prompt>", "2: <prompt>"]
    assert [c.logprob for c in completions] == [-1.0, -1.0, -1.0]  # two words, -0.5 each
    assert body == {
        "model": "policy-folder",
        "prompt": "<prompt>",
        "n": 3,
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 7,
        "seed": 11,
        "logprobs": 1,
        # For `transformers serve`, which samples only where its generation config says so.
        "generation_config": '{"do_sample": true}',
    }
    with FakeOpenAI() as server:
        fast_client(server.base_url, "m", {}).complete_prompt("p", temperature=0.0)
        assert server.requests[0].body["generation_config"] == '{"do_sample": false}'


def test_prompt_completions_retry_and_name_the_text_endpoint_on_failure():
    with FakeOpenAI(returns_logprobs=False) as server:
        client = fast_client(server.base_url, "m", {})
        server.fail("503", retry_after="0")
        server.fail("malformed_json")
        (completion,) = client.complete_prompt("p", logprobs=True)
        assert completion.text == "0: p" and completion.logprob is None
        assert len(server.requests) == 3
        server.fail("400")
        with pytest.raises(ChatAPIError, match=r"completion request to .*/v1/completions"):
            client.complete_prompt("p")
    with pytest.raises(ValueError, match="prompt must be a non-empty str"):
        client.complete_prompt("")


def test_served_model_asks_once_per_completion_when_the_server_ignores_n():
    with FakeOpenAI(honours_n=False, delay_s=0.02) as server:
        model = served(server)
        first = model.generate(["a", "b"], n=3, temperature=1.0, top_p=1.0, max_new_tokens=5)
        assert model.honours_n is False
        asked = len(server.requests)
        second = model.generate(["c", "d"], n=3, temperature=1.0, top_p=1.0, max_new_tokens=5)
        later = server.requests[asked:]
        assert server.max_in_flight > 1  # requests are concurrent
    assert [len(row) for row in first + second] == [3, 3, 3, 3]
    assert all(c.text.endswith(p) for row, p in zip(first, "ab") for c in row)
    # Once known, every request asks for one completion (6, none wasted on n=3).
    assert len(later) == 6 and {r.body["n"] for r in later} == {1}


def test_served_model_uses_n_where_the_server_honours_it():
    with FakeOpenAI() as server:
        model = served(server)
        rows = model.generate(["a", "b"], n=4, temperature=1.0, top_p=1.0, max_new_tokens=5)
        assert len(server.requests) == 2 and model.honours_n is True
    assert [len(row) for row in rows] == [4, 4]


def test_an_agent_served_by_a_server_sends_its_own_prompts_and_records_logprobs(
    small_tasks, tmp_path
):
    agent = tiny_agent()
    with FakeOpenAI(text_reply=lambda prompt, _: f"reply to {len(prompt)}") as server:
        agent.serve_from(served(server))
        batch = [[{"role": "user", "content": "hello"}], [{"role": "user", "content": "hi"}]]
        replies = agent.act(batch)
        sent = sorted(r.body["prompt"] for r in server.requests)
        assert sent == sorted(agent.format_prompts(batch))
        assert replies == [f"reply to {len(p)}" for p in agent.last_prompts]
        assert agent.last_logprobs == [-1.5, -1.5]  # three words, -0.5 each
        assert agent.stats.generated_tokens == 0  # nothing generated locally

        envs = [gym.make("ColBench-Backend-v0", tasks=small_tasks) for _ in range(2)]
        buffer = collect(envs, agent, task_indices=range(2), seed=0, progress=False)
    turns = [turn for t in buffer for turn in t.turns]
    assert turns and all(turn.logprob is not None for turn in turns)
    assert TrajectoryBuffer.load(buffer.save(tmp_path / "served.jsonl")) == buffer


def test_an_agent_generates_locally_once_its_weights_change(caplog):
    agent = tiny_agent()
    with FakeOpenAI() as server:
        agent.serve_from(served(server))
        agent.act([[{"role": "user", "content": "hello"}]])
        with torch.no_grad():
            next(agent.model.parameters()).add_(0.01)  # a training step
        with caplog.at_level(logging.WARNING, logger="agents.transformers_agent"):
            agent.act([[{"role": "user", "content": "hello"}]])
        assert len(server.requests) == 1
    assert agent.server is None and "generating locally" in caplog.text
    assert agent.stats.generated_tokens > 0 and agent.last_logprobs == [None]


def test_model_server_refuses_a_template_without_model_or_port():
    with pytest.raises(ValueError, match=r"needs \{port\}"):
        ModelServer("vllm serve {model}", "folder")
    with pytest.raises(ValueError, match=r"needs \{model\}"):
        ModelServer("vllm serve x --port {port}", "folder")
    with pytest.raises(ValueError, match="does not parse"):
        ModelServer("vllm serve '{model} --port {port}", "folder")


def test_model_server_reports_a_command_that_exits(tmp_path):
    command = f"{sys.executable} -c \"print('no GPU for {{model}} on {{port}}'); exit(3)\""
    server = ModelServer(command, "folder", log_path=tmp_path / "server.log")
    with pytest.raises(RuntimeError, match=r"exited with code 3(.|\n)*no GPU for folder"):
        server.start()


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("served") / "policy"
    model, tokenizer = make_tiny_lm(seed=0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_real_transformers_server_serves_a_saved_policy_folder(tiny_folder, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    agent = tiny_agent(temperature=0.0)
    command = f"{sys.executable} -m transformers.cli.transformers serve {{model}} --port {{port}}"
    server = ModelServer(command, str(tiny_folder), startup_timeout_s=120)
    with ServedModel(server=server) as model:
        assert server._process is None  # started on first use
        agent.serve_from(model)
        batch = [[{"role": "user", "content": f"task {i}"}] for i in range(3)]
        remote = agent.act(batch)
        candidates = agent.generate(agent.last_prompts[:1], n=2, temperature=1.0)
        process = server._process
    assert process.poll() is not None  # stopped on leaving the block
    assert model.honours_n is False  # transformers serve ignores n: asked once per sample
    assert len(candidates[0]) == 2
    agent.serve_from(None)
    # Greedy decoding of the same weights from the same prompt: the same replies.
    assert agent.act(batch) == remote
