"""The official simulated human (``prompt_format="official"``), through the public API.

The prompt files written here have the official placeholders but not the official text
(which is CC-BY-NC and never shipped): the format is what is tested.
"""

from types import SimpleNamespace

import gymnasium as gym
import pytest
from PIL import Image

import sweetrl_gym  # noqa: F401 - registers the environments
from sweetrl_gym.simulators import (
    HUMAN_SIMULATOR_PROMPT,
    OpenAISimulator,
    OpenAIVisionSimulator,
    read_official_prompt,
)
from tests.conftest import make_tasks
from tests.fake_openai import FakeOpenAI, fast_client

BACKEND_TEMPLATE = (
    "Act as the person who asked: {problem_description}\n"
    "What you know:\n{hidden_information}\n\n"
    "The talk so far:\n{dialogue_history}\n\nAnswer in two sentences."
)
FRONTEND_TEMPLATE = "Act as the person who wants a page; compare the two images.\n"
TARGET = "<html><body style='background:#0000ff'>target</body></html>"


@pytest.fixture
def backend_prompt(tmp_path):
    path = tmp_path / "human_simulator_code_prompt.txt"
    path.write_text(BACKEND_TEMPLATE, encoding="utf-8")
    return read_official_prompt(path)


@pytest.fixture
def frontend_prompt(tmp_path):
    path = tmp_path / "human_simulator_html_prompt.txt"
    path.write_text(FRONTEND_TEMPLATE, encoding="utf-8")
    return read_official_prompt(path, "frontend")


def solid(html):
    colour = html.split("background:")[1][:7] if "background:" in html else "#ffffff"
    return Image.new("RGB", (64, 48), colour)


def test_backend_sends_the_filled_template_as_one_user_message_and_cuts_at_400(
    backend_prompt, sandbox
):
    (task,) = make_tasks(1, seed=3)
    with FakeOpenAI(lambda messages: "y" * 1000) as server:
        client = fast_client(server.base_url, "llama-70b", {})
        human = OpenAISimulator(client, prompt_format="official", prompt=backend_prompt)
        env = gym.make("ColBench-Backend-v0", tasks=[task], simulator=human, sandbox=sandbox)
        env.reset(options={"task_index": 0})
        first, *_ = env.step("Let me think.\nOUTPUT: What is the name?")
        env.step("And the rounding?")
        env.close()
    assert first == "y" * 400  # the official cut, for the backend
    body = server.requests[1].body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("llama-70b", 0.0, 4096)
    transcript = (
        f"user:{task.problem_description}\n\n\n\nassistant:What is the name?\n\n\n\n"
        f"user:{'y' * 400}\n\n\n\nassistant:And the rounding?\n\n\n\nagent:"
    )
    filled = BACKEND_TEMPLATE.format(
        problem_description=task.problem_description,
        hidden_information=task.ground_truth,
        dialogue_history=transcript,
    )
    assert body["messages"] == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": filled},
    ]
    assert "format=official" in human.name  # caches keyed by name keep the formats apart
    assert "format" not in OpenAISimulator(client).name  # ours: the name it always had


def test_frontend_sends_the_prompt_and_both_screenshots_in_one_user_message(frontend_prompt):
    task = SimpleNamespace(problem_description="A page for my bakery.", ground_truth=TARGET)
    page = "<html><body style='background:#ff0000'>mine</body></html>"
    with FakeOpenAI(lambda messages: "Make it blue.") as server:
        client = fast_client(server.base_url, "qwen2-vl", {})
        human = OpenAIVisionSimulator(
            client, prompt_format="official", prompt=frontend_prompt, render=solid
        )
        start = [{"role": "user", "content": task.problem_description}]
        assert human.reply(task, [*start, {"role": "assistant", "content": f"Here: {page}"}])
        human.reply(task, [*start, {"role": "assistant", "content": "Which colour, please?"}])
    with_page, without = (r.body for r in server.requests)
    assert (with_page["temperature"], with_page["max_tokens"]) == (0.0, 4096)
    (message,) = with_page["messages"]  # no system message
    kinds = [part["type"] for part in message["content"]]
    assert message["role"] == "user" and kinds == ["text", "text", "image_url", "text", "image_url"]
    assert message["content"][0]["text"] == FRONTEND_TEMPLATE
    (message,) = without["messages"]
    assert [part["type"] for part in message["content"]] == ["text", "text", "text", "image_url"]
    texts = " ".join(p["text"] for p in message["content"] if p["type"] == "text")
    assert "Which colour" not in texts  # the official human never reads the agent's words


def test_frontend_replies_are_cut_at_1000(frontend_prompt):
    from sweetrl_gym.render import Renderer

    tasks = [{"problem_description": "A page for my bakery.", "ground_truth": TARGET}]
    with FakeOpenAI(lambda messages: "z" * 3000) as server, Renderer(pages=1) as renderer:
        client = fast_client(server.base_url, "qwen2-vl", {})
        human = OpenAIVisionSimulator(
            client, prompt_format="official", prompt=frontend_prompt, render=solid
        )
        env = gym.make("ColBench-Frontend-v0", tasks=tasks, simulator=human, renderer=renderer)
        env.reset(options={"task_index": 0})
        reply, *_ = env.step("What colours do you like?")
        env.close()
    assert reply == "z" * 1000


def test_a_missing_prompt_file_names_the_official_one(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"human_simulator_code_prompt\.txt") as caught:
        read_official_prompt(tmp_path / "nowhere.txt")
    assert "nowhere.txt" in str(caught.value) and "facebookresearch/sweet_rl" in str(caught.value)
    with pytest.raises(FileNotFoundError, match=r"human_simulator_html_prompt\.txt"):
        read_official_prompt(tmp_path / "nowhere.txt", "frontend")


@pytest.mark.parametrize(
    ("text", "kind", "match"),
    [
        ("You know {hidden_information}.", "backend", r"missing \{problem_description\}"),
        (BACKEND_TEMPLATE + "{mood}", "backend", r"unknown placeholder\(s\) \{mood\}"),
        ("Unclosed {hidden_information", "backend", "not a format template"),
        (BACKEND_TEMPLATE, "frontend", r"human_simulator_html_prompt\.txt"),
        ("   \n", "frontend", "non-empty"),
    ],
)
def test_a_wrong_prompt_file_names_the_file_and_the_placeholders(tmp_path, text, kind, match):
    path = tmp_path / "mine.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match) as caught:
        read_official_prompt(path, kind)
    assert str(path) in str(caught.value)
    if kind == "backend" and "non-empty" not in match:
        assert "{problem_description}, {hidden_information}, {dialogue_history}" in str(
            caught.value
        )


def test_the_official_format_needs_the_official_text():
    client = fast_client("http://localhost:8000/v1", "m", {})
    with pytest.raises(ValueError, match=r"human_simulator_code_prompt\.txt"):
        OpenAISimulator(client, prompt_format="official")  # our prompt is not the official
    with pytest.raises(ValueError, match=r"human_simulator_html_prompt\.txt"):
        OpenAIVisionSimulator(client, prompt_format="official")
    with pytest.raises(ValueError, match="prompt_format must be one of"):
        OpenAISimulator(client, prompt=HUMAN_SIMULATOR_PROMPT, prompt_format="paper")


def test_frontend_official_request_has_the_official_captions_and_unscaled_screenshots(
    frontend_prompt,
):
    import base64
    import io

    def tall(html):
        colour = html.split("background:")[1][:7] if "background:" in html else "#ffffff"
        return Image.new("RGB", (1280, 3000), colour)

    task = SimpleNamespace(problem_description="A page for my bakery.", ground_truth=TARGET)
    page = "<html><body style='background:#ff0000'>mine</body></html>"
    start = [{"role": "user", "content": task.problem_description}]
    with FakeOpenAI(lambda messages: "Make it blue.") as server:
        client = fast_client(server.base_url, "qwen2-vl", {})
        official = OpenAIVisionSimulator(
            client, prompt_format="official", prompt=frontend_prompt, render=tall
        )
        official.reply(task, [*start, {"role": "assistant", "content": f"OUTPUT: {page}"}])
        official.reply(task, [*start, {"role": "assistant", "content": "Which colour?"}])
        OpenAIVisionSimulator(client, render=tall).reply(
            task, [*start, {"role": "assistant", "content": page}]
        )
    with_page, without, ours = (r.body["messages"] for r in server.requests)

    def texts(messages):
        return [p["text"] for p in messages[-1]["content"] if p["type"] == "text"]

    def sizes(messages):
        urls = [p["image_url"]["url"] for p in messages[-1]["content"] if p["type"] == "image_url"]
        return [Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size for url in urls]

    assert texts(with_page) == [
        FRONTEND_TEMPLATE,
        "Below is the design the agent is referring to.",
        "Below is the ground truth design that the human user wants.",
    ]
    assert texts(without) == [
        FRONTEND_TEMPLATE,
        "The agent did not provide any visualization.",
        "Below is the ground truth design that the human user wants.",
    ]
    assert sizes(with_page) == [(1280, 3000), (1280, 3000)]  # as rendered
    assert sizes(ours) == [(640, 1500), (640, 1500)]  # ours: scaled to 640 wide
    assert "image=anyxany" in official.name
