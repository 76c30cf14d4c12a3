"""Each benchmark script runs end to end on a tiny budget."""

import json

import pytest

from benchmarks import demo
from benchmarks.speed import render_speed, rollout_speed, sandbox_speed
from sweetrl_gym import TrajectoryBuffer


@pytest.mark.slow
def test_demo_runs(capsys, tmp_path, default_model_cache):
    cache, _, _ = default_model_cache
    argv = ["--score", "5", "--model-tasks", "2", "--model-turns", "2", "--max-new-tokens", "8"]
    results = demo.main([*argv, "--cache-dir", str(cache), "--out-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "[HUMAN]" in out and "[AGENT]" in out
    assert results["oracle (privileged)"]["success_rate"] == 1.0
    assert results["answer-immediately"]["success_rate"] == 0.0
    model = results["SmolLM2-135M-Instruct (greedy, 2 turns)"]
    assert model["num_tasks"] == 2 and 1.0 <= model["avg_turns"] <= 2.0
    episodes = TrajectoryBuffer.load(tmp_path / "default_model.jsonl")
    official = TrajectoryBuffer.from_official_jsonl(tmp_path / "default_model.official.jsonl")
    assert [t.turns for t in official] == [t.turns for t in episodes]
    assert all(turn.prompt for _, turn in episodes.turns())  # the model's formatted prompts


def test_rollout_speed_with_a_tiny_model(tmp_path):
    from agents import TransformersAgent
    from tests.tiny_lm import make_tiny_lm

    model, tokenizer = make_tiny_lm()
    agent = TransformersAgent(model, tokenizer, temperature=0.0, max_new_tokens=4)
    argv = [
        "--tasks",
        "3",
        "--num-envs",
        "3",
        "--max-turns",
        "2",
        "--out",
        str(tmp_path / "r.json"),
    ]
    result = rollout_speed.main(argv, agent=agent)
    sequential, batched = result["one_env_at_a_time"], result["batched_3_envs"]
    assert sequential["turns"] == batched["turns"] and sequential["turns"] >= 3
    assert result["speedup_turns_per_s"] > 0
    # The bare generate side replays the batched rollout's prompts: the same replies.
    bare = result["bare_generate"]
    assert result["same_prompts"] and bare["sequences"] == batched["turns"]
    assert bare["generated_tokens"] == batched["generated_tokens"] > 0
    assert result["rollout_vs_bare_tokens_per_s"] > 0
    assert 0 < batched["reused_tokens"] < batched["prompt_tokens"]
    assert json.loads((tmp_path / "r.json").read_text()) == result


def test_sandbox_speed_on_a_few_tasks():
    result = sandbox_speed.main(["--tasks", "3"])
    assert result["candidates"] == 6 and result["passed"] == 3
    assert result["verdicts_agree"]
    assert all(rate > 0 for rate in result["candidates_per_s"].values())


def test_render_speed_compares_against_a_fresh_browser(tmp_path):
    out = tmp_path / "render_speed.json"
    result = render_speed.main(["--pages", "2", "--out", str(out)])
    assert result["pages"] == 2 and result["renders_agree"]
    assert set(result["renders_per_s"]) == {
        "fresh_browser_per_page",
        "reused_sequential",
        "reused_pool_2",
    }
    assert json.loads(out.read_text()) == result
