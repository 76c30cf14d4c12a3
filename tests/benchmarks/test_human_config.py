"""The simulated human from a comparison config: the official format, and a preflight."""

from __future__ import annotations

import socket

import pytest

from benchmarks.cli import main
from benchmarks.harness.compare import build_simulator, check_simulator, env_kwargs
from benchmarks.harness.experiment_config import ConfigError, load_config
from sweetrl_gym.simulators import OpenAISimulator, OpenAIVisionSimulator
from tests.fake_openai import FakeOpenAI

TEMPLATE = "Asked: {problem_description}\nKnown: {hidden_information}\n{dialogue_history}\n"


def human(url: str, *more: str) -> list[str]:
    return [
        "env.simulator=openai",
        f"env.simulator_base_url={url}",
        "env.simulator_model=llama-70b",
        *more,
    ]


def official(path) -> list[str]:
    return ["env.simulator_prompt_format=official", f"env.simulator_prompt_file={path}"]


def dead_url() -> str:
    """The API root of a loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def prompt_file(tmp_path):
    path = tmp_path / "human_simulator_code_prompt.txt"
    path.write_text(TEMPLATE, encoding="utf-8")
    return path


def test_the_config_selects_the_official_human(prompt_file, tmp_path):
    url = "http://127.0.0.1:8000/v1"
    config = load_config("smoke", human(url, *official(prompt_file)))
    simulator = env_kwargs(config, "test")["simulator"]
    assert isinstance(simulator, OpenAISimulator) and simulator.prompt_format == "official"
    assert (simulator.prompt, simulator.max_tokens, simulator.on_error) == (TEMPLATE, 4096, "raise")
    more = ["env.simulator_max_tokens=300", "env.simulator_on_error=no_response"]
    more.append("env.simulator_timeout_s=600")
    simulator = build_simulator(load_config("smoke", human(url, *official(prompt_file), *more)))
    assert (simulator.max_tokens, simulator.on_error) == (300, "no_response")
    assert simulator.client.timeout_s == 600.0  # a serial server queues every env's request
    ours = build_simulator(load_config("smoke", human(url)))
    assert (ours.prompt_format, ours.max_tokens) == ("ours", 256)  # the default is unchanged
    assert ours.client.timeout_s == 60.0
    html = tmp_path / "human_simulator_html_prompt.txt"
    html.write_text("Compare the two designs.\n", encoding="utf-8")
    frontend = build_simulator(load_config("frontend-smoke", human(url, *official(html))))
    assert isinstance(frontend, OpenAIVisionSimulator) and frontend.prompt_format == "official"


URL = "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    ("name", "overrides", "match"),
    [
        ("smoke", human(URL, "env.simulator_prompt_format=official"), r"code_prompt\.txt"),
        ("frontend-smoke", human(URL, "env.simulator_prompt_format=official"), r"html_prompt"),
        ("smoke", human(URL, "env.simulator_prompt_file=x.txt"), "only with env.simulator_prompt"),
        ("smoke", human(URL, "env.simulator_prompt_format=paper"), "must be one of"),
        ("smoke", human(URL, "env.simulator_on_error=ignore"), "simulator_on_error must be"),
        ("smoke", human(URL, "env.simulator_timeout_s=0"), "simulator_timeout_s must be > 0"),
        ("smoke", ["env.simulator_max_tokens=100"], r"env\.simulator = 'openai'"),  # offline
    ],
)
def test_the_config_refuses_an_incomplete_human(name, overrides, match):
    with pytest.raises(ConfigError, match=match):
        load_config(name, overrides)


def test_compare_stops_before_any_work_when_the_human_is_down(capsys, tmp_path):
    out, url = tmp_path / "run", dead_url()
    argv = ["compare", "--config", "smoke", "--out", str(out)]
    assert main([*argv, *(f"--set={x}" for x in human(url))]) == 1
    error = capsys.readouterr().err
    assert url in error and "llama-70b" in error and "does not answer" in error
    assert not out.exists()
    with FakeOpenAI() as server:
        server.fail("401")  # a wrong key: refused at once
        assert main([*argv, *(f"--set={x}" for x in human(server.base_url))]) == 1
    error = capsys.readouterr().err
    assert server.base_url in error and "HTTP 401" in error and not out.exists()


def test_compare_refuses_a_missing_prompt_file_before_any_work(capsys, tmp_path):
    out, missing = tmp_path / "run", tmp_path / "nowhere.txt"
    argv = ["compare", "--config", "smoke", "--out", str(out)]
    overrides = human("http://127.0.0.1:8000/v1", *official(missing))
    assert main([*argv, *(f"--set={x}" for x in overrides)]) == 1
    error = capsys.readouterr().err
    assert str(missing) in error and "prompts/human_simulator_code_prompt.txt" in error
    assert not out.exists()


def test_the_preflight_is_one_short_chat(prompt_file):
    with FakeOpenAI() as server:
        check_simulator(load_config("smoke", human(server.base_url, *official(prompt_file))))
    (request,) = server.requests
    assert (request.body["model"], request.body["max_tokens"]) == ("llama-70b", 1)
    check_simulator(load_config("smoke"))  # the offline human: nothing to ask
