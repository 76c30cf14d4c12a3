"""``paper-frontend``'s official settings: the answer page, the token limit, the pairs."""

import pytest

from algorithms import MultiTurnDPOConfig, SweetRLConfig
from benchmarks.harness.compare import env_kwargs
from benchmarks.harness.experiment_config import ConfigError, load_config


def test_env_answer_reaches_the_environment_and_is_checked():
    assert "answer" not in env_kwargs(load_config("frontend-smoke"), "test")
    config = load_config("frontend-smoke", ["env.answer='last_page'"])
    assert env_kwargs(config, "test")["answer"] == "last_page"
    with pytest.raises(ConfigError, match="'final_message' or 'last_page'"):
        load_config("frontend-smoke", ["env.answer='last'"])
    with pytest.raises(ConfigError, match="ColBench-Frontend-v0"):
        load_config("smoke", ["env.answer='last_page'"])


def test_paper_frontend_takes_the_official_values():
    paper = load_config("paper-frontend")
    assert paper.env.answer == "last_page"
    assert paper.policy.max_new_tokens == 1024  # the official agent's, and the candidates'
    assert paper.policy.history == "content"
    sweet = SweetRLConfig.from_dict(paper.method_settings("sweet-rl"))
    assert (sweet.pair_rule, sweet.min_reward_gap, sweet.pair_success_only) == ("all", 0.1, False)
    assert sweet.candidate_max_new_tokens is None  # the policy's 1,024
    dpo = MultiTurnDPOConfig.from_dict(paper.method_settings("mt-dpo"))
    assert (dpo.pair_rule, dpo.min_reward_gap, dpo.pair_success_only) == ("all", 0.1, False)
    ours = load_config("frontend-smoke")
    assert ours.env.answer == "final_message" and ours.policy.history == "raw"
