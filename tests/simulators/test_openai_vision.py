import base64
import io
import logging
from types import SimpleNamespace

import pytest
from PIL import Image

from sweetrl_gym.lm import ChatAPIError, ChatClient
from sweetrl_gym.render import RenderError
from sweetrl_gym.simulators import SimulatorError
from sweetrl_gym.simulators.openai_simulator import NO_RESPONSE
from sweetrl_gym.simulators.openai_vision import (
    DESIGN_FEEDBACK_PROMPT,
    DESIGN_QUESTION_PROMPT,
    OpenAIVisionSimulator,
    image_data_url,
)
from tests.fake_openai import FakeOpenAI, fast_client

TARGET = "<html><body style='background:#0000ff'>target</body></html>"
TASK = SimpleNamespace(problem_description="A page for my bakery.", ground_truth=TARGET)


class ColourRender:
    """Renders a page as one colour (from its background style), 1280 wide."""

    def __init__(self, height=900):
        self.height = height
        self.calls = []

    def __call__(self, html):
        self.calls.append(html)
        if "broken" in html:
            raise RenderError("tab crashed")
        colour = html.split("background:")[1][:7] if "background:" in html else "#ffffff"
        return Image.new("RGB", (1280, self.height), colour)


def page(colour):
    return f"<html><body style='background:{colour}'>hi</body></html>"


def dialogue(*agent_and_human):
    messages = [{"role": "user", "content": TASK.problem_description}]
    for i, text in enumerate(agent_and_human):
        messages.append({"role": "assistant" if i % 2 == 0 else "user", "content": text})
    return messages


def decode(part):
    assert part["type"] == "image_url"
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1], validate=True)))
    assert image.format == "PNG"
    return image.convert("RGB")


def image_parts(body):
    return [p for p in body["messages"][-1]["content"] if p["type"] == "image_url"]


def text_of(body):
    return " ".join(p["text"] for p in body["messages"][-1]["content"] if p["type"] == "text")


def make_sim(server, render=None, **kwargs):
    client = fast_client(server.base_url, "qwen2-vl", kwargs)
    return OpenAIVisionSimulator(client, render=render or ColourRender(), **kwargs)


@pytest.fixture
def server():
    with FakeOpenAI(lambda messages: "  Make the background blue.  \n") as fake:
        yield fake


def test_a_page_is_shown_first_and_the_target_second(server):
    sim = make_sim(server)
    assert sim.name.startswith("openai-vision:qwen2-vl(")  # caches key its replies by it
    message = f"Here is a draft:\n```html\n{page('#ff0000')}\n```\nDoes it look right?"
    assert sim.reply(TASK, dialogue(message)) == "Make the background blue."
    body = server.requests[0].body
    assert (body["model"], body["temperature"]) == ("qwen2-vl", 0.0)
    assert body["messages"][0] == {"role": "system", "content": DESIGN_FEEDBACK_PROMPT}
    agent, target = (decode(part) for part in image_parts(body))
    assert agent.getpixel((10, 10)) == (255, 0, 0)
    assert target.getpixel((10, 10)) == (0, 0, 255)
    assert agent.size == target.size == (640, 450)  # scaled down to 640 wide
    # The VLM reads the words around the page, not the page's code.
    assert "Does it look right?" in text_of(body) and "<html" not in text_of(body)


def test_a_question_without_a_page_is_answered_from_the_target(server):
    render = ColourRender()
    make_sim(server, render).reply(TASK, dialogue("Which colour should the header be?"))
    body = server.requests[0].body
    assert body["messages"][0]["content"] == DESIGN_QUESTION_PROMPT
    (target,) = (decode(part) for part in image_parts(body))
    assert target.getpixel((0, 0)) == (0, 0, 255)
    assert "Which colour should the header be?" in text_of(body)
    assert render.calls == [TARGET]


def test_only_the_latest_agent_message_counts(server):
    make_sim(server).reply(TASK, dialogue(page("#ff0000"), "Too red.", "What font size?"))
    body = server.requests[0].body
    assert len(image_parts(body)) == 1 and "What font size?" in text_of(body)
    assert "Too red." not in text_of(body)


def test_an_unrenderable_page_is_read_as_words(server, caplog):
    with caplog.at_level(logging.WARNING, logger="sweetrl_gym.simulators.openai_vision"):
        make_sim(server).reply(TASK, dialogue(f"My page: {page('broken')}"))
    body = server.requests[0].body
    assert len(image_parts(body)) == 1
    assert "could not be displayed" in text_of(body) and "<html" not in text_of(body)
    assert "could not be rendered" in caplog.text


def test_an_unrenderable_target_is_a_simulator_error(server):
    task = SimpleNamespace(ground_truth=page("broken"))
    with pytest.raises(SimulatorError, match="cannot see the target"):
        make_sim(server).reply(task, dialogue("Hi?"))
    assert server.requests == []


def test_tall_screenshots_are_scaled_to_bounds(server):
    make_sim(server, ColourRender(height=12_000)).reply(TASK, dialogue(page("#00ff00")))
    for image in map(decode, image_parts(server.requests[0].body)):
        assert image.size == (256, 2400)  # 1280 x 12000 fits in 640 x 2400 at scale 0.2


def test_target_renders_are_cached_per_task_in_a_bounded_cache(server):
    render = ColourRender()
    sim = make_sim(server, render, target_cache_size=1)
    other = SimpleNamespace(ground_truth=page("#00ff00"))
    sim.reply(TASK, dialogue("Q1?"))
    sim.reply(TASK, dialogue("Q2?"))
    assert render.calls == [TARGET]
    sim.reply(other, dialogue("Q3?"))  # evicts TASK's target
    sim.reply(TASK, dialogue("Q4?"))
    assert render.calls == [TARGET, other.ground_truth, TARGET]


def test_transient_failures_are_retried(server):
    server.fail("503", times=2)
    assert make_sim(server, max_retries=2).reply(TASK, dialogue("Hi?")) == (
        "Make the background blue."
    )


def test_a_failing_endpoint_raises_simulator_error(server):
    server.fail("500", times=3)
    with pytest.raises(SimulatorError, match=r"qwen2-vl.*HTTP 500") as caught:
        make_sim(server, max_retries=2).reply(TASK, dialogue(page("#ff0000")))
    assert isinstance(caught.value.__cause__, ChatAPIError)
    assert "on_error='no_response'" in str(caught.value)


def test_no_response_fallback_is_opt_in_and_logged(server, caplog):
    server.fail("400")
    sim = make_sim(server, on_error="no_response")
    with caplog.at_level(logging.WARNING, logger="sweetrl_gym.simulators.openai_vision"):
        assert sim.reply(TASK, dialogue("Hi?")) == NO_RESPONSE
    assert "HTTP 400" in caplog.text
    assert sim.reply(TASK, dialogue("Again?")) == "Make the background blue."


def test_name_changes_with_what_changes_replies():
    url = "http://localhost:8000/v1"
    base = OpenAIVisionSimulator(ChatClient(url, "m"))
    assert base.name == OpenAIVisionSimulator(ChatClient(url, "m")).name and "m" in base.name
    others = {
        OpenAIVisionSimulator(
            ChatClient(url, "m"), prompt=DESIGN_FEEDBACK_PROMPT + "Be terse."
        ).name,
        OpenAIVisionSimulator(ChatClient(url, "m"), question_prompt="Answer.").name,
        OpenAIVisionSimulator(ChatClient(url, "m"), temperature=0.5).name,
        OpenAIVisionSimulator(ChatClient(url, "m"), max_image_height=1000).name,
        OpenAIVisionSimulator(ChatClient(url, "m2")).name,
    }
    assert base.name not in others and len(others) == 5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"on_error": "ignore"}, "on_error"),
        ({"prompt": " "}, "prompt"),
        ({"temperature": -1}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_image_width": 0}, "max_image_width"),
        ({"target_cache_size": -1}, "target_cache_size"),
        ({"render": "chromium"}, "render"),
    ],
)
def test_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OpenAIVisionSimulator(ChatClient("http://localhost:8000/v1", "m"), **kwargs)


def test_a_dialogue_without_an_agent_message_is_rejected(server):
    with pytest.raises(ValueError, match="agent's message"):
        make_sim(server).reply(TASK, [{"role": "user", "content": "Hi"}])
    with pytest.raises(TypeError, match="ground_truth"):
        make_sim(server).reply(SimpleNamespace(), dialogue("Hi?"))
    assert server.requests == []


def test_image_data_url_bounds_and_modes():
    url = image_data_url(Image.new("RGBA", (100, 50), (0, 0, 0, 0)), max_width=40, max_height=40)
    image = decode({"type": "image_url", "image_url": {"url": url}})
    assert image.size == (40, 20) and image.getpixel((0, 0)) == (255, 255, 255)
    small = decode(
        {"type": "image_url", "image_url": {"url": image_data_url(Image.new("L", (3, 4)))}}
    )
    assert small.size == (3, 4)  # never scaled up
    with pytest.raises(ValueError, match="max_height"):
        image_data_url(Image.new("RGB", (3, 4)), max_height=0)
    with pytest.raises(ValueError, match="no pixels"):
        image_data_url(Image.new("RGB", (0, 4)))


@pytest.mark.slow
def test_with_the_real_renderer(server):
    pytest.importorskip("playwright")
    sim = OpenAIVisionSimulator(ChatClient(server.base_url, "qwen2-vl"))
    task = SimpleNamespace(ground_truth=page("#0000ff"))
    sim.reply(task, dialogue(page("#ff0000")))
    agent, target = (decode(part) for part in image_parts(server.requests[0].body))
    assert agent.width == target.width == 640
    assert agent.getpixel((600, 300)) == (255, 0, 0)
    assert target.getpixel((600, 300)) == (0, 0, 255)
