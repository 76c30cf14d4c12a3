"""`sweetrl compare --check`: every missing prerequisite at once, with its fix; nothing started."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from benchmarks.cli import main
from tests.fake_openai import FakeOpenAI

KINDS = (  # the five kinds a new user lacks for `--config paper`, and what fixes each
    ("env.simulator_prompt_file", "git clone https://github.com/facebookresearch/sweet_rl"),
    ("policy.system_prompt_file", "git clone https://github.com/facebookresearch/sweet_rl"),
    ("env.simulator_base_url", "vllm serve meta-llama/Llama-3.1-70B-Instruct"),
    (
        "data.trajectories",
        "hf download facebook/collaborative_agent_bench colbench_code_offline_15k_llama8b.jsonl"
        " --repo-type dataset --local-dir data/colbench",
    ),
    (
        "env.test_tasks",
        "hf download facebook/collaborative_agent_bench backend_tasks/test.jsonl"
        " --repo-type dataset --local-dir data/colbench",
    ),
    ("policy.model", "accept the model's licence at https://huggingface.co/meta-llama/"),
)


@pytest.fixture
def empty_folder(tmp_path, monkeypatch):
    """An empty working folder, no network to the hub, an empty hub cache."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    return folder


def closed_url() -> str:
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_lists_all(text: str) -> None:
    assert "6 prerequisite(s) missing" in text, text
    text = "\n" + text
    items = text.split("\n- ")[1:]
    for (setting, fix), item in zip(KINDS, items, strict=True):
        assert item.startswith(setting), item
        assert f"fix: {fix}" in item, item
    assert "then `hf auth login`" in items[-1]


def test_check_in_an_empty_folder_lists_every_missing_prerequisite_and_creates_nothing(
    empty_folder, capsys
):
    url = closed_url()
    code, out, _ = run(
        capsys,
        "compare",
        "--config",
        "paper",
        "--check",
        "--set",
        f"env.simulator_base_url={url!r}",
    )
    assert code == 1
    assert_lists_all(out)
    assert "Connection refused" in out or "does not answer" in out
    assert list(empty_folder.iterdir()) == []


def test_the_launch_refuses_with_the_same_list_and_leaves_the_folder_empty(empty_folder, capsys):
    url = closed_url()
    code, _, err = run(
        capsys, "compare", "--config", "paper", "--set", f"env.simulator_base_url={url!r}"
    )
    assert code == 1
    assert_lists_all(err)
    last = err.strip().splitlines()[-1]
    assert last.startswith("sweetrl: error: 6 prerequisite(s) missing") and "--check" in last
    assert list(empty_folder.iterdir()) == []  # no run folder, config.json, data/ or lock


def test_check_passes_when_every_prerequisite_is_there(empty_folder, capsys):
    for path in (
        "sweet_rl/prompts/human_simulator_code_prompt.txt",
        "sweet_rl/prompts/llm_agent_code_prompt.txt",
        "data/colbench/colbench_code_offline_15k_llama8b.jsonl",
        "data/colbench/backend_tasks/test.jsonl",
        "model/config.json",
    ):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("{}\n")
    before = sorted(p.as_posix() for p in empty_folder.rglob("*"))
    with FakeOpenAI() as human:
        code, out, _ = run(
            capsys,
            "compare",
            "--config",
            "paper",
            "--check",
            "--set",
            f"env.simulator_base_url={human.base_url!r}",
            "--set",
            "policy.model='./model'",
        )
    assert (code, out.strip()) == (0, "all prerequisites found for config 'paper'"), out
    assert sorted(p.as_posix() for p in empty_folder.rglob("*")) == before


def test_a_model_in_the_hub_cache_counts_offline(empty_folder, tmp_path, capsys, monkeypatch):
    from benchmarks.harness import prerequisites

    cached = tmp_path / "config.json"
    cached.write_text("{}")
    monkeypatch.setattr(
        "huggingface_hub.try_to_load_from_cache", lambda repo, name, **_: str(cached)
    )
    assert prerequisites._model_problem("meta-llama/Llama-3.1-8B-Instruct") == ""
    monkeypatch.setattr("huggingface_hub.try_to_load_from_cache", lambda repo, name, **_: None)
    assert "HF_HUB_OFFLINE" in prerequisites._model_problem("meta-llama/Llama-3.1-8B-Instruct")


def test_the_frontend_check_names_its_own_human_server_and_task_files(empty_folder, capsys):
    url = closed_url()
    code, out, _ = run(
        capsys,
        "compare",
        "--config",
        "paper-frontend",
        "--check",
        "--set",
        f"env.simulator_base_url={url!r}",
    )
    assert code == 1
    items = ("\n" + out).split("\n- ")[1:]
    settings = [item.split(" = ")[0] for item in items]
    assert settings == [
        "env.simulator_prompt_file",
        "policy.system_prompt_file",
        "env.simulator_base_url",
        "env.tasks",
        "env.test_tasks",
        "policy.model",
    ]
    assert "human_simulator_html_prompt.txt" in items[0]
    assert "vllm serve Qwen/Qwen2-VL-72B-Instruct" in items[2]
    assert "--limit-mm-per-prompt '{\"image\": 2}'" in items[2]  # two screenshots a request
    assert "WebSight" in items[3] and "frontend_tasks/test.jsonl" in items[4]
    assert list(empty_folder.iterdir()) == []
