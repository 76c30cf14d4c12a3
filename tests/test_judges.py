import base64
import io
import logging

import numpy as np
import pytest
from PIL import Image

from sweetrl_gym.judges import (
    JudgeError,
    OpenAIVisionJudge,
    SimilarityJudge,
    parse_verdict,
    win_rate,
    win_rate_from_buffers,
)
from sweetrl_gym.lm import ChatClient
from sweetrl_gym.render import RenderError
from sweetrl_gym.similarity import perceptual_similarity
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn
from tests.fake_openai import FakeOpenAI, fast_client
from tests.test_similarity import draw_page

# Pages as tiny specs: "<html>hero=#10b981 columns=2</html>" -> draw_page(hero=..., columns=2).
BASE = "<html></html>"


def spec(**options):
    return "<html>" + " ".join(f"{k}={v}" for k, v in options.items()) + "</html>"


class FakeRender:
    """Draws a page from its spec; counts the renders; fails on 'broken'."""

    def __init__(self):
        self.calls = []

    def __call__(self, html):
        self.calls.append(html)
        if "broken" in html:
            raise RenderError("the tab crashed")
        body = html.removeprefix("<html>").removesuffix("</html>")
        options = dict(item.split("=") for item in body.split())
        if "columns" in options:
            options["columns"] = int(options["columns"])
        return draw_page(**options)


# --- SimilarityJudge -------------------------------------------------------------------


def test_similarity_judge_prefers_the_page_closer_to_the_target():
    judge = SimilarityJudge()
    assert "perceptual" in judge.name
    target, close, far = draw_page(), draw_page(hero="#2563eb"), draw_page(hero="#dc2626")
    assert judge.compare(target, close, far) == 1.0
    assert judge.compare(target, far, close) == 0.0
    assert judge.compare(target, far, far) == 0.5


def test_similarity_judge_tie_margin():
    scores = {"a": 0.80, "b": 0.79, "c": 0.70}

    def similarity(page, target):
        return scores[page]

    assert SimilarityJudge(similarity, tie_margin=0.02).compare("t", "a", "b") == 0.5
    assert SimilarityJudge(similarity, tie_margin=0.02).compare("t", "a", "c") == 1.0
    assert SimilarityJudge(similarity, tie_margin=0.0).compare("t", "b", "a") == 0.0
    assert "similarity" in SimilarityJudge(similarity).name


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.1", True])
def test_similarity_judge_rejects_bad_tie_margins(bad):
    with pytest.raises(ValueError, match="tie_margin"):
        SimilarityJudge(tie_margin=bad)


def test_similarity_judge_rejects_non_finite_similarities():
    judge = SimilarityJudge(lambda page, target: float("nan"))
    with pytest.raises(ValueError, match="finite"):
        judge.compare("t", "a", "b")


# --- win_rate --------------------------------------------------------------------------


def test_win_rate_counts_wins_ties_and_losses():
    render = FakeRender()
    targets = {f"t{i}": BASE for i in range(4)} | {"only-target": BASE}
    pages = {
        "t0": BASE,  # exact: beats a recoloured reference
        "t1": spec(hero="#2563eb"),
        "t2": spec(hero="#dc2626"),  # loses to a closer reference
        "t3": BASE,  # both exact: a tie
        "not-a-target": BASE,
    }
    reference = {
        "t0": spec(hero="#dc2626"),
        "t1": None,  # missing: a black page
        "t2": spec(hero="#2563eb"),
        "t3": BASE,
    }
    result = win_rate(SimilarityJudge(), pages, reference, targets, render=render)
    assert result["scores"] == {"t0": 1.0, "t1": 1.0, "t2": 0.0, "t3": 0.5}
    assert (result["wins"], result["ties"], result["losses"]) == (2, 1, 1)
    assert result["num_tasks"] == 4 and result["win_rate"] == pytest.approx(2.5 / 4)
    assert 0.0 <= result["ci_low"] <= result["win_rate"] <= result["ci_high"] <= 1.0
    assert result["ci_low"] < result["ci_high"]
    assert result["judge"].startswith("similarity:")
    # Each distinct HTML rendered once: BASE and the two recolourings.
    assert sorted(render.calls) == sorted({BASE, spec(hero="#2563eb"), spec(hero="#dc2626")})


def pixel_closeness(page, target):
    """A cheap similarity for tests about counting, not about looks."""
    small = [np.asarray(image.resize((16, 16)), dtype=float) for image in (page, target)]
    return -np.abs(small[0] - small[1]).mean()


def test_win_rate_interval_is_reproducible_and_narrows_with_tasks():
    def judge_result(n, seed):
        targets = {f"t{i}": BASE for i in range(n)}
        pages = {t: (BASE if i % 2 else spec(hero="#dc2626")) for i, t in enumerate(targets)}
        reference = {t: spec(hero="#2563eb") for t in targets}
        return win_rate(
            SimilarityJudge(pixel_closeness),
            pages,
            reference,
            targets,
            render=FakeRender(),
            seed=seed,
        )

    small, again, other_seed = judge_result(8, 0), judge_result(8, 0), judge_result(8, 1)
    assert small == again
    assert small["win_rate"] == other_seed["win_rate"] == 0.5
    large = judge_result(40, 0)
    assert large["ci_high"] - large["ci_low"] < small["ci_high"] - small["ci_low"]


def test_a_page_that_does_not_render_counts_as_black():
    render = FakeRender()
    result = win_rate(
        SimilarityJudge(),
        {"t": spec(broken=1)},
        {"t": spec(hero="#dc2626")},
        {"t": BASE},
        render=render,
    )
    assert result["scores"] == {"t": 0.0} and (result["ci_low"], result["ci_high"]) == (0.0, 0.0)
    with pytest.raises(ValueError, match="target page does not render"):
        win_rate(SimilarityJudge(), {"t": BASE}, {"t": BASE}, {"t": spec(broken=1)}, render=render)


def test_win_rate_rejects_bad_inputs():
    render, judge = FakeRender(), SimilarityJudge()
    with pytest.raises(ValueError, match="no task is in targets"):
        win_rate(judge, {"a": BASE}, {"b": BASE}, {"a": BASE, "b": BASE}, render=render)
    with pytest.raises(ValueError, match="not HTML"):
        win_rate(judge, {"a": BASE}, {"a": BASE}, {"a": None}, render=render)
    with pytest.raises(ValueError, match="confidence"):
        win_rate(judge, {"a": BASE}, {"a": BASE}, {"a": BASE}, render=render, confidence=1.0)

    class Broken:
        name = "broken"

        def compare(self, target, first, second):
            return 1.5

    with pytest.raises(ValueError, match="outside"):
        win_rate(Broken(), {"a": BASE}, {"a": BASE}, {"a": BASE}, render=render)


def trajectory(task_id, answer, ground_truth=BASE):
    return Trajectory(
        task_id=task_id,
        turns=[Turn(messages=[{"role": "user", "content": "Make me a page"}], action=answer)],
        messages=[
            {"role": "user", "content": "Make me a page"},
            {"role": "assistant", "content": answer},
        ],
        reward=0.0,
        success=False,
        answer=answer,
        reference={} if ground_truth is None else {"ground_truth": ground_truth},
    )


def test_win_rate_from_buffers_uses_the_first_episode_of_each_task():
    mine = TrajectoryBuffer(
        [
            trajectory("a", f"Here it is: {BASE} Enjoy!"),
            trajectory("a", spec(hero="#dc2626")),  # a later episode: ignored
            trajectory("b", "I could not make it."),  # no page: black
            trajectory("mine only", BASE),
        ]
    )
    theirs = TrajectoryBuffer(
        [trajectory("a", spec(hero="#dc2626")), trajectory("b", spec(hero="#2563eb"))]
    )
    result = win_rate_from_buffers(SimilarityJudge(), mine, theirs, render=FakeRender())
    assert result["scores"] == {"a": 1.0, "b": 0.0} and result["win_rate"] == 0.5


def test_win_rate_from_buffers_checks_ground_truths():
    render = FakeRender()
    with pytest.raises(ValueError, match="two different ground truths"):
        win_rate_from_buffers(
            SimilarityJudge(),
            TrajectoryBuffer([trajectory("a", BASE)]),
            TrajectoryBuffer([trajectory("a", BASE, ground_truth=spec(hero="#dc2626"))]),
            render=render,
        )
    with pytest.raises(ValueError, match="no ground truth"):
        win_rate_from_buffers(
            SimilarityJudge(),
            TrajectoryBuffer([trajectory("a", BASE, ground_truth=None)]),
            TrajectoryBuffer([trajectory("a", BASE, ground_truth=None)]),
            render=render,
        )


# --- OpenAIVisionJudge -----------------------------------------------------------------


def decode(part):
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert image.format == "PNG"
    return image.convert("RGB")


def images_of(messages):
    return [decode(p) for p in messages[-1]["content"] if p["type"] == "image_url"]


def sighted(messages):
    """A judge that looks: the candidate more similar to the target wins."""
    target, one, two = images_of(messages)
    a, b = perceptual_similarity(one, target), perceptual_similarity(two, target)
    return "Candidate 1" if a > b else "**2**"


def make_judge(server, **kwargs):
    return OpenAIVisionJudge(fast_client(server.base_url, "judge-vl", kwargs), **kwargs)


def test_vision_judge_sends_target_then_candidates_in_both_orders():
    target, close, far = draw_page(), draw_page(hero="#2563eb"), draw_page(hero="#dc2626")
    with FakeOpenAI(sighted) as server:
        judge = make_judge(server)
        assert "judge-vl" in judge.name
        assert judge.compare(target, close, far) == 1.0
        assert judge.compare(target, far, close) == 0.0
        requests = [r.body for r in server.requests]
    assert len(requests) == 4
    first, second = (images_of(body["messages"]) for body in requests[:2])
    assert [image.size for image in first] == [(640, 686)] * 3  # scaled to 640 wide
    # The target leads both times; the candidates swap places.
    hero = (320, 150)
    assert first[0].getpixel(hero) == second[0].getpixel(hero)
    assert first[1].getpixel(hero) == second[2].getpixel(hero) != first[2].getpixel(hero)
    assert requests[0]["messages"][0]["role"] == "system"
    assert requests[0]["temperature"] == 0.0


def test_vision_judge_position_bias_cancels_out():
    with FakeOpenAI(lambda messages: "1") as server:
        assert make_judge(server).compare(draw_page(), draw_page(), draw_page(hero="#000")) == 0.5


def test_unparseable_verdicts_count_as_ties(caplog):
    answers = iter(["I cannot tell, both have merits and flaws 1 2", "1"])
    with (
        FakeOpenAI(lambda messages: next(answers)) as server,
        caplog.at_level(logging.WARNING, logger="sweetrl_gym.judges"),
    ):
        # First order: no verdict (0.5); swapped: "1" means the second page wins (0.0).
        assert make_judge(server).compare(draw_page(), draw_page(), draw_page()) == 0.25
    assert "no verdict" in caplog.text


def test_vision_judge_endpoint_failure_is_a_judge_error():
    with FakeOpenAI(lambda messages: "1") as server:
        server.fail("500", times=2)
        with pytest.raises(JudgeError, match="HTTP 500"):
            make_judge(server, max_retries=1).compare(draw_page(), draw_page(), draw_page())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"prompt": ""}, "prompt"),
        ({"temperature": -1}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_image_width": 0}, "max_image_width"),
    ],
)
def test_vision_judge_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OpenAIVisionJudge(ChatClient("http://localhost:8000/v1", "m"), **kwargs)


def test_win_rate_with_the_vision_judge():
    targets = {f"t{i}": BASE for i in range(3)}
    pages = {"t0": BASE, "t1": BASE, "t2": spec(hero="#dc2626")}
    reference = {t: spec(hero="#2563eb") for t in targets}
    with FakeOpenAI(sighted) as server:
        result = win_rate(make_judge(server), pages, reference, targets, render=FakeRender())
    assert result["scores"] == {"t0": 1.0, "t1": 1.0, "t2": 0.0}
    assert result["win_rate"] == pytest.approx(2 / 3)
    assert np.isclose(result["ci_high"], 1.0) and np.isclose(result["ci_low"], 0.0)


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("1", 1.0),
        ("2", 0.0),
        ("tie", 0.5),
        (" **Tie**. ", 0.5),
        ("Candidate 2.", 0.0),
        ("Answer: 1", 1.0),
        ("Both look the same.", 0.5),
        ("Candidate 1 is closer than candidate 2. Final answer: 2", 0.0),
        ("Candidate 1 is closer than candidate 2", None),
        ("", None),
        ("I don't know", None),
    ],
)
def test_parse_verdict(answer, verdict):
    assert parse_verdict(answer) == verdict
