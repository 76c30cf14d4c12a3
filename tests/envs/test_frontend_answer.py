"""Which page a Frontend episode is scored on (``answer=``), through ``gym.make``.

A stand-in renderer paints each page in its background colour, so these run without a
browser; the similarity is 1 for the target's colour, else 0.
"""

import hashlib

import gymnasium as gym
import pytest
from PIL import Image

import sweetrl_gym  # noqa: F401 - registers the environments
from sweetrl_gym.render import RenderError
from sweetrl_gym.render.browser import RenderedPage

TARGET = "<html><body style='background:#0000ff'>target</body></html>"
TASKS = [{"problem_description": "A page for my bakery.", "ground_truth": TARGET}]


def page(colour):
    return f"<html><body style='background:{colour}'>mine</body></html>"


class PaintRenderer:
    """Renders a page as one colour; a page with "broken" in it does not render."""

    width, height, cache_size = 64, 48, 32

    def render_page(self, html):
        if "broken" in html:
            raise RenderError("tab crashed")
        colour = html.split("background:")[1][:7] if "background:" in html else "#ffffff"
        sha = hashlib.sha256(html.encode()).hexdigest()
        return RenderedPage(Image.new("RGB", (64, 48), colour), (), sha)


class Human:
    name = "fixed"

    def reply(self, task, messages):
        return "Make it blue."


class Scored:
    """The similarity: 1 for the target's own colour, else 0; remembers the page scored."""

    def __init__(self):
        self.pages = []

    def __call__(self, page, target):
        self.pages.append(page.getpixel((0, 0)))
        return float(page.getpixel((0, 0)) == target.getpixel((0, 0)))


def play(actions, **kwargs):
    scored = Scored()
    env = gym.make(
        "ColBench-Frontend-v0",
        tasks=TASKS,
        renderer=PaintRenderer(),
        simulator=Human(),
        similarity=scored,
        **kwargs,
    )
    env.reset(options={"task_index": 0})
    for action in actions:
        _, reward, done, _, info = env.step(action)
    env.close()
    assert done
    (colour,) = scored.pages
    return reward, colour, info


BLUE, RED = page("#0000ff"), page("#ff0000")
BLACK = (0, 0, 0)


def test_last_page_scores_the_page_of_an_earlier_turn():
    actions = [f"Here is a draft: {BLUE}", "I WANT TO ANSWER: the page above is final."]
    ours, colour, _ = play(actions)
    assert (ours, colour) == (0.0, BLACK)  # the final message has no page: a black image
    official, colour, info = play(actions, answer="last_page")
    assert (official, colour) == (1.0, (0, 0, 255))
    assert info["screenshot"] is not None and info["similarity"] == 1.0


def test_last_page_is_the_latest_one_sent():
    actions = [f"First: {BLUE}", f"Second: {RED}", "I WANT TO ANSWER: done"]
    assert play(actions, answer="last_page")[:2] == (0.0, (255, 0, 0))


def test_last_page_takes_a_page_before_the_answer_marker_in_the_final_message():
    # The official env looks for the page in all that counts, not after the marker only.
    final = f"Thinking.\nOUTPUT: {BLUE} I WANT TO ANSWER: this one"
    assert play([final])[:2] == (0.0, BLACK)
    assert play([final], answer="last_page")[:2] == (1.0, (0, 0, 255))
    assert play([f"OUTPUT: I WANT TO ANSWER: {BLUE}"], answer="last_page")[0] == 1.0


def test_last_page_at_the_turn_limit_and_after_a_page_that_does_not_render():
    limit = play([f"A: {BLUE}", "Any colour you prefer?"], max_turns=2, answer="last_page")
    assert limit[:2] == (1.0, (0, 0, 255))
    assert play([f"A: {BLUE}", "Any colour you prefer?"], max_turns=2)[:2] == (0.0, BLACK)
    reward, colour, info = play(
        [f"A: {BLUE}", "<html><body>broken</body></html>", "I WANT TO ANSWER: ok"],
        answer="last_page",
    )
    assert (reward, colour) == (0.0, BLACK)  # as officially: the failed page replaced it
    assert "render_error" in info


def test_an_unknown_answer_is_refused():
    with pytest.raises(ValueError, match="answer must be one of"):
        gym.make("ColBench-Frontend-v0", tasks=TASKS, renderer=PaintRenderer(), answer="last")
