import json
import time

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from PIL import Image

import sweetrl_gym  # noqa: F401 - registers the environments
from agents import OracleAgent, collect, summarize
from sweetrl_gym.render import Renderer
from sweetrl_gym.render.colours import colour_name, parse_css_colour
from sweetrl_gym.simulators import PageSketch
from sweetrl_gym.tasks import load_frontend_tasks

TAILWIND = '<script src="https://cdn.tailwindcss.com"></script>'
BLANK = f"<html><head>{TAILWIND}</head><body></body></html>"


def target_page() -> str:
    return (
        f"<html><head>{TAILWIND}</head><body>"
        '<nav class="bg-indigo-700 text-white p-4 flex justify-between"><span>Crumb</span>'
        "<a>Menu</a><a>Visit</a></nav>"
        '<header class="bg-amber-400 text-gray-900 py-24 text-center">'
        '<h1 class="text-5xl font-bold">Fresh bread daily</h1><p>Since 1982</p></header>'
        '<section class="bg-white p-10"><h2 class="text-3xl">Our breads</h2>'
        '<div class="grid grid-cols-3 gap-6 mt-6"><div class="bg-gray-100 p-6">Sourdough</div>'
        '<div class="bg-gray-100 p-6">Rye</div><div class="bg-gray-100 p-6">Baguette</div></div>'
        "</section>"
        '<footer class="bg-gray-800 text-gray-100 p-8">Crumb Bakery, 5 Mill Lane</footer>'
        "</body></html>"
    )


@pytest.fixture(scope="module")
def renderer():
    with Renderer(timeout_s=2.0, pages=2) as shared:
        yield shared


@pytest.fixture
def env(renderer, tmp_path):
    tasks = [
        {"problem_description": "I need a website for my bakery.", "ground_truth": target_page()}
    ]
    environment = gym.make(
        "ColBench-Frontend-v0", tasks=tasks, renderer=renderer, render_mode="rgb_array"
    )
    yield environment
    environment.close()


def test_check_env_on_bundled_tasks(renderer):
    environment = gym.make("ColBench-Frontend-v0", split="test", renderer=renderer, max_turns=2)
    check_env(environment.unwrapped, skip_render_check=True)
    environment.close()


def test_the_target_scores_one_and_a_blank_page_far_less(env):
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("I WANT TO ANSWER: " + target_page())
    assert terminated and reward == pytest.approx(1.0, abs=1e-6)
    assert info["similarity"] == reward and info["success"]

    env.reset(seed=0)
    _, blank_reward, _, _, info = env.step("I WANT TO ANSWER: " + BLANK)
    assert blank_reward < 0.7 and not info["success"]

    env.reset(seed=0)
    _, missing_reward, _, _, info = env.step("I WANT TO ANSWER: sorry, no page")
    assert missing_reward < blank_reward  # a missing page is a black image
    assert info["screenshot"] is None


def test_a_closer_page_scores_higher(env):
    wrong_colours = (
        target_page().replace("bg-amber-400", "bg-blue-900").replace("bg-indigo-700", "bg-white")
    )
    scores = []
    for page in (target_page(), wrong_colours, BLANK):
        env.reset(seed=0)
        scores.append(env.step("I WANT TO ANSWER: " + page)[1])
    assert scores[0] > scores[1] > scores[2]


def test_feedback_mid_episode_names_a_real_difference(env, renderer):
    observation, _ = env.reset(seed=0)
    assert observation == "I need a website for my bakery."
    hero = next(b for b in renderer.render_page(target_page()).blocks if b.tag == "header")
    wanted = colour_name(parse_css_colour(hero.background))
    mine = target_page().replace("bg-amber-400", "bg-green-800")
    reply, reward, terminated, _, _ = env.step(f"Here is a first draft:\n{mine}\nThoughts?")
    assert not terminated and reward == 0.0
    assert "hero" in reply and "background" in reply and wanted in reply
    assert len(reply) <= 1000
    first_sentence = reply.split(". ")[0]
    assert "hero" in first_sentence  # the most outstanding difference comes first


def test_feedback_on_missing_sections_and_questions_without_a_page(env):
    env.reset(seed=0)
    no_footer = target_page().split("<footer")[0] + "</body></html>"
    reply = env.step(no_footer)[0]
    assert "footer" in reply.lower() and "dark gray" in reply
    reply = env.step("What colours should the page use?")[0]
    assert "amber" in reply or "yellow" in reply or "orange" in reply
    assert len(reply) <= 1000


def test_info_carries_reference_and_screenshots(env):
    _, info = env.reset(seed=0)
    reference = info["reference"]
    assert reference["ground_truth"] == target_page()
    target = Image.open(reference["screenshot"])
    assert target.width == 1280
    assert info["screenshot"] is None
    blank = env.render()
    assert blank.shape == (800, 1280, 3) and (blank == 255).all()
    _, _, _, _, info = env.step("Draft: " + BLANK)
    assert Image.open(info["screenshot"]).size == (1280, 800)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape[1] == 1280
    json.dumps(info["reference"])  # trajectories store it as JSON


def test_the_reference_holds_the_targets_design_compactly(env, renderer):
    """The critic's compact hint: a skeleton of the target, read back as the same design."""
    _, info = env.reset(seed=0)
    skeleton = info["reference"]["skeleton"]
    design = PageSketch.from_blocks(renderer.render_page(skeleton).blocks)
    target = PageSketch.from_blocks(renderer.render_page(target_page()).blocks)
    assert design == target
    assert [s.kind for s in design.sections] == ["navigation", "hero", "features", "footer"]
    assert design.sections[2].columns == 3


def test_hostile_final_page_scores_as_missing_within_bounded_time(env):
    env.reset(seed=0)
    start = time.monotonic()
    _, reward, terminated, _, info = env.step(
        "I WANT TO ANSWER: <html><body><script>while (true) {}</script></body></html>"
    )
    assert terminated and time.monotonic() - start < 20
    assert "render_error" in info and reward < 0.5


def test_turn_limit_takes_the_last_page(renderer):
    tasks = [{"problem_description": "A page please.", "ground_truth": target_page()}]
    environment = gym.make("ColBench-Frontend-v0", tasks=tasks, renderer=renderer, max_turns=2)
    environment.reset(seed=0)
    environment.step("What do you want?")
    _, reward, terminated, _, info = environment.step(target_page())
    assert terminated and info["turn_limit_reached"] and reward == pytest.approx(1.0)
    environment.close()


def test_official_jsonl_and_rollouts_with_the_oracle(renderer, tmp_path):
    path = tmp_path / "frontend.jsonl"
    tasks = load_frontend_tasks("bundled", split="test")[:2]
    path.write_text(
        "\n".join(
            json.dumps(
                {"problem_description": t.problem_description, "ground_truth": t.ground_truth}
            )
            for t in tasks
        )
    )
    buffer = collect(
        "ColBench-Frontend-v0",
        OracleAgent(),
        task_indices=range(2),
        env_kwargs={"tasks": str(path), "renderer": renderer},
        progress=False,
    )
    metrics = summarize(buffer)
    assert metrics["similarity"] == pytest.approx(1.0)
    assert metrics["success_rate"] == 1.0
    assert all(t.metadata["similarity"] == pytest.approx(1.0) for t in buffer)


def test_bad_arguments_are_clear_errors(renderer):
    with pytest.raises(ValueError, match="clip_model"):
        gym.make("ColBench-Frontend-v0", renderer=renderer, similarity="clip")
    with pytest.raises(ValueError, match="success_threshold"):
        gym.make("ColBench-Frontend-v0", renderer=renderer, success_threshold=2.0)
    with pytest.raises(ValueError, match="render_mode"), pytest.warns(UserWarning):
        gym.make("ColBench-Frontend-v0", renderer=renderer, render_mode="video")


def test_the_render_cache_grows_to_what_the_environments_need(tmp_path):
    with Renderer(timeout_s=2.0, pages=1, cache_size=8) as renderer:
        tasks = [{"problem_description": "A page.", "ground_truth": target_page()}]
        kwargs = {"tasks": tasks, "renderer": renderer}
        gym.make("ColBench-Frontend-v0", render_cache=96, **kwargs).close()
        assert renderer.cache_size == 96
        gym.make("ColBench-Frontend-v0", render_cache=10, **kwargs).close()
        assert renderer.cache_size == 96  # shared: never shrunk by another environment
        for bad in (0, -3, 2.5, True):
            with pytest.raises(ValueError, match="render_cache"):
                gym.make("ColBench-Frontend-v0", render_cache=bad, **kwargs)


def test_a_comparison_sizes_the_render_cache_from_its_environments():
    from benchmarks.harness.compare import env_kwargs
    from benchmarks.harness.experiment_config import load_config

    config = load_config("frontend-smoke", ["data.num_envs=32", "eval.num_envs=16"])
    assert env_kwargs(config, "train")["render_cache"] == 96
    assert env_kwargs(config, "test")["render_cache"] == 48
    assert "render_cache" not in env_kwargs(load_config("smoke"), "train")
