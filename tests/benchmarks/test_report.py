"""The comparison report: results.json, results.md and plots from a results dict."""

from __future__ import annotations

import copy
import datetime
import json
import math
import sys

import numpy as np
import pytest

from algorithms.critic_example import critic_example_table
from algorithms.fit_context import Diagnostics
from algorithms.pair_signal import pair_signal_text
from benchmarks.harness import report

RUN = ["zero-shot", "rft", "mt-dpo", "archer", "sweet-rl"]
LONG_REASON = (
    "multi-turn DPO needs preference pairs | the buffer has none: every task's samples got "
    "the same reward, so there is nothing to prefer\nsecond line of the error"
)


def _eval(success, tests, turns, *, score="tests_passed"):
    """An eval dict shaped like agents.evaluation.summarize's: (value, low, high) triples."""
    metrics = {}
    for name, (value, low, high) in (
        ("success_rate", success),
        (score, tests),
        ("avg_turns", turns),
    ):
        metrics.update({name: value, f"{name}_ci_low": low, f"{name}_ci_high": high})
    return {**metrics, "num_tasks": 100.0, "num_episodes": 100.0}


def _fit(seconds, metrics, history):
    return {"status": "trained", "metrics": metrics, "history": history, "seconds": seconds}


def _history(*tags):
    return [[step, tag, 1.0 / (step + 1) + i] for step in range(5) for i, tag in enumerate(tags)]


# The labels a comparison records with each fit (its class's).
LABELS = {"rft": "RFT", "mt-dpo": "MT-DPO", "archer": "ArCHer", "sweet-rl": "SWEET-RL"}


def _labelled(results):
    for name, record in results["methods"].items():
        if isinstance(record.get("fit"), dict) and name in LABELS:
            record["fit"]["label"] = LABELS[name]
    return results


def backend_results():
    config = {
        "name": "quick",
        "description": "SmolLM2 on 100 tasks",
        "seed": 3,
        "env": {"id": "ColBench-Backend-v0", "simulator": "default", "max_turns": 10},
        "policy": {"model": "default"},
        "data": {"train_tasks": 200, "samples_per_task": 3},
        "eval": {"test_tasks": 100, "samples_per_task": 1},
        "training": {},
        "methods": {"run": RUN, "rft": {"select": "best_of_k"}},
    }
    return _labelled(
        {
            "name": "quick",
            "config": config,
            "seeds": {"comparison": 3, "collect": 3, "eval": 3},
            "task_sets": {
                "train": {"tasks": 200, "sha256": "0123456789abcdef" * 4},
                "test": {"tasks": 100, "sha256": "fedcba9876543210" * 4},
            },
            "buffer": {"episodes": 600, "mean_reward": 0.31, "success_rate": 0.2},
            "methods": {
                "zero-shot": {
                    "eval": _eval((0.224, 0.180, 0.269), (0.41, 0.36, 0.46), (3.14, 2.9, 3.38)),
                    "fit": None,
                },
                # Overlaps zero-shot's interval.
                "rft": {
                    "eval": _eval((0.25, 0.20, 0.30), (0.45, 0.40, 0.50), (3.0, 2.8, 3.2)),
                    "fit": _fit(
                        42.0,
                        {"train/loss": 0.5123, "train/num_turns": 80.0},
                        _history("train/loss"),
                    ),
                },
                "mt-dpo": {"eval": None, "fit": {"status": "skipped", "reason": LONG_REASON}},
                "archer": {
                    "eval": _eval((0.20, 0.15, 0.25), (0.40, 0.35, 0.45), (3.5, 3.2, 3.8)),
                    "fit": _fit(
                        125.0,
                        {"critic/q_loss": float("nan"), "train/loss": 0.9},
                        [*_history("critic/q_loss", "train/loss"), [5, "train/loss", float("nan")]],
                    ),
                },
                # Clearly above zero-shot.
                "sweet-rl": {
                    "eval": _eval((0.35, 0.30, 0.40), (0.55, 0.50, 0.60), (2.5, 2.3, 2.7)),
                    "fit": _fit(
                        3725.0,
                        {
                            "critic/loss": 0.4,
                            "critic/train_pair_accuracy": 0.9,
                            "critic/heldout_pair_accuracy": 0.75,
                            "train/reward_accuracy": 0.6,
                            "train/loss": 0.3,
                        },
                        _history("critic/loss", "train/loss", "train/reward_accuracy"),
                    ),
                },
            },
            "seconds": 5000.0,
        }
    )


def frontend_results():
    results = backend_results()
    results["config"]["env"]["id"] = "ColBench-Frontend-v0"
    results["config"]["methods"]["run"] = ["zero-shot", "rft", "sweet-rl"]
    results["methods"] = {
        "zero-shot": {
            "eval": _eval(
                (0.0, 0.0, 0.0), (0.712, 0.69, 0.733), (2.0, 1.9, 2.1), score="similarity"
            ),
            "fit": None,
        },
        "rft": {
            "eval": _eval((0.0, 0.0, 0.0), (0.72, 0.70, 0.74), (2.0, 1.9, 2.1), score="similarity"),
            "fit": _fit(10.0, {"train/loss": 1.5}, _history("train/loss")),
        },
        "sweet-rl": {
            "eval": _eval((0.0, 0.0, 0.0), (0.8, 0.78, 0.82), (2.0, 1.9, 2.1), score="similarity"),
            "fit": _fit(20.0, {"critic/loss": 0.7, "train/loss": 1.2}, _history("critic/loss")),
        },
    }
    return _labelled(results)


def _open_png(path):
    from PIL import Image

    with Image.open(path) as image:
        assert image.format == "PNG"
        image.load()
        return image.size


def test_backend_report_files(tmp_path):
    pytest.importorskip("matplotlib")
    import sweetrl_gym

    results = backend_results()
    before = copy.deepcopy(results)
    report.write_report(results, tmp_path)
    assert _nan_free_equal(results, before)  # the caller's dict is left alone

    data = json.loads((tmp_path / "results.json").read_text())
    versions = data.pop("versions")
    written_at = datetime.datetime.fromisoformat(data.pop("written_at"))
    assert written_at.utcoffset() == datetime.timedelta(0)
    assert data == report.json_safe(results)
    assert versions["sweetrl-gym"] == sweetrl_gym.__version__
    assert versions["python"].count(".") == 2 and versions["machine"] and versions["platform"]
    assert {"torch", "transformers", "accelerate", "gymnasium"} <= set(versions)
    # NaN became null, in the final metrics and in the history.
    archer = data["methods"]["archer"]["fit"]
    assert archer["metrics"]["critic/q_loss"] is None and archer["history"][-1] == [
        5,
        "train/loss",
        None,
    ]

    md = (tmp_path / "results.md").read_text()
    assert md.startswith("# Comparison: quick\n\nSmolLM2 on 100 tasks\n")
    assert "| Method | Success rate | Tests passed | Avg. turns | Trained in |" in md
    assert "| Zero-shot | 22.4% [18.0%, 26.9%] | 41.0% [36.0%, 46.0%] | 3.1 [2.9, 3.4] | — |" in md
    assert (
        "| SWEET-RL | 35.0% [30.0%, 40.0%] | 55.0% [50.0%, 60.0%] | 2.5 [2.3, 2.7] | 1 h 2 min |"
        in md
    )
    assert "| RFT | 25.0% [20.0%, 30.0%] | 45.0% [40.0%, 50.0%] | 3.0 [2.8, 3.2] | 42.0 s |" in md
    assert (
        "| ArCHer | 20.0% [15.0%, 25.0%] | 40.0% [35.0%, 45.0%] | 3.5 [3.2, 3.8] | 2 min 5 s |"
        in md
    )
    assert "`ColBench-Backend-v0`" in md and "base model `default`" in md
    assert "200 tasks × 3 samples" in md and "100 held-out tasks × 1 sample." in md
    assert "train `0123456789ab`" in md and "test `fedcba987654`" in md
    assert "0123456789abc" not in md  # hashes are cut to 12 hex digits
    assert "Seed 3" in md and "1 h 23 min" in md
    assert (
        "- SWEET-RL vs zero-shot: +12.6 points; 95% intervals do not overlap (a real difference)"
        in md
    )
    assert (
        "- RFT vs zero-shot: +2.6 points; 95% intervals overlap (not a measurable difference)" in md
    )
    assert "- ArCHer vs zero-shot: -2.4 points; 95% intervals overlap" in md
    assert "MT-DPO vs" not in md and "Zero-shot vs" not in md
    assert "Against zero-shot, on success rate:" in md
    # Training metrics: accuracies as percentages, the final loss, a NaN shown as a dash.
    assert "## Training metrics" in md
    assert "| SWEET-RL | 75.0% | 90.0% | 60.0% | 0.3 |" in md
    assert "| ArCHer | — | — | — | 0.9 |" in md
    assert "nan" not in md.lower()
    # The plots are embedded; every PNG opens.
    names = ["success_rate", "tests_passed", "avg_turns", "critic_accuracy", "training_curves"]
    for name in names:
        assert f"({name}.png)" in md
        width, height = _open_png(tmp_path / f"{name}.png")
        assert width > 100 and height > 100
    assert not (tmp_path / "similarity.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["results.json", "results.md", *(f"{n}.png" for n in names)]
    )  # no temporary file left behind


def _nan_free_equal(a, b):
    return json.dumps(report.json_safe(a), sort_keys=True) == json.dumps(
        report.json_safe(b), sort_keys=True
    )


def test_table_rows_follow_the_run_order_and_skipped_methods_say_why():
    lines = report.format_table(backend_results()).splitlines()
    assert len(lines) == 2 + len(RUN)
    assert [line.split(" | ")[0].lstrip("| ") for line in lines[2:]] == [
        "Zero-shot",
        "RFT",
        "MT-DPO",
        "ArCHer",
        "SWEET-RL",
    ]
    skipped = lines[4]
    # Short: the first line of the reason, cut with an ellipsis, its pipe escaped.
    assert skipped.startswith(
        "| MT-DPO | not trained: multi-turn DPO needs preference pairs \\| the"
    )
    assert "…" in skipped and "second line" not in skipped
    assert skipped.endswith("| — | — | — |")
    assert all(line.count(" | ") == lines[0].count(" | ") for line in lines)


def test_the_share_of_episodes_that_answered_is_a_column_when_evaluated(tmp_path):
    results = backend_results()
    assert "Answered" not in report.format_table(results)  # an older results.json
    for name, share in (("zero-shot", 0.4), ("sweet-rl", 0.775)):
        results["methods"][name]["eval"].update(
            answer_rate=share, answer_rate_ci_low=share - 0.05, answer_rate_ci_high=share + 0.05
        )
    table = report.format_table(results)
    assert "| Method | Success rate | Tests passed | Avg. turns | Answered | Trained in |" in table
    assert "| 3.1 [2.9, 3.4] | 40.0% [35.0%, 45.0%] | — |" in table
    assert "| 2.5 [2.3, 2.7] | 77.5% [72.5%, 82.5%] | 1 h 2 min |" in table
    assert "| 3.0 [2.8, 3.2] | — | 42.0 s |" in table  # RFT: not measured
    report.write_report(results, tmp_path)
    assert (tmp_path / "answer_rate.png").stat().st_size > 1000


def test_rows_show_dashes_for_missing_or_nan_values():
    results = backend_results()
    results["methods"]["rft"]["eval"]["tests_passed"] = float("nan")
    results["methods"]["rft"]["eval"]["avg_turns_ci_low"] = None
    results["methods"]["archer"]["eval"] = None
    table = report.format_table(results)
    assert "| RFT | 25.0% [20.0%, 30.0%] | — | 3.0 | 42.0 s |" in table
    assert "| ArCHer | not evaluated | — | — | 2 min 5 s |" in table
    assert "nan" not in table.lower()
    assert report.json_safe(results)["methods"]["rft"]["eval"]["tests_passed"] is None


def test_comparison_falls_back_to_tests_passed_when_nothing_succeeds():
    results = backend_results()
    for entry in results["methods"].values():
        if entry["eval"]:
            entry["eval"].update(
                success_rate=0.0, success_rate_ci_low=0.0, success_rate_ci_high=0.0
            )
    assert report.main_metric(results) == "tests_passed"
    lines = report.compare_to_baseline(results)
    assert (
        lines[0]
        == "RFT vs zero-shot: +4.0 points; 95% intervals overlap (not a measurable difference)"
    )
    assert (
        lines[-1]
        == "SWEET-RL vs zero-shot: +14.0 points; 95% intervals do not overlap (a real difference)"
    )
    assert "on tests passed (no method succeeds on any task)" in report.render_markdown(results)


def test_comparison_needs_an_evaluated_baseline():
    results = backend_results()
    assert report.compare_to_baseline(results, baseline="rft")[0].startswith(
        "ArCHer vs RFT: -5.0 points"
    )
    results["methods"]["zero-shot"]["eval"] = None
    assert report.compare_to_baseline(results) == []
    assert "Against zero-shot" not in report.render_markdown(results)


def test_intervals_that_touch_count_as_overlapping():
    results = backend_results()
    results["methods"]["sweet-rl"]["eval"]["success_rate_ci_low"] = 0.269
    assert report.compare_to_baseline(results)[-1].endswith(
        "intervals overlap (not a measurable difference)"
    )
    results["methods"]["sweet-rl"]["eval"]["success_rate_ci_low"] = 0.2691
    assert report.compare_to_baseline(results)[-1].endswith("do not overlap (a real difference)")


def test_frontend_report_uses_similarity(tmp_path):
    pytest.importorskip("matplotlib")
    results = frontend_results()
    report.write_report(results, tmp_path)
    md = (tmp_path / "results.md").read_text()
    assert "| Method | Success rate | Similarity | Avg. turns | Trained in |" in md
    assert "| Zero-shot | 0.0% [0.0%, 0.0%] | 0.712 [0.690, 0.733] | 2.0 [1.9, 2.1] | — |" in md
    assert "Tests passed" not in md
    assert "Against zero-shot, on similarity:" in md
    assert "- SWEET-RL vs zero-shot: +0.088; 95% intervals do not overlap (a real difference)" in md
    assert "- RFT vs zero-shot: +0.008; 95% intervals overlap (not a measurable difference)" in md
    assert _open_png(tmp_path / "similarity.png")[0] > 0
    assert not (tmp_path / "tests_passed.png").exists()
    # No method logged an accuracy: no accuracy plot, no accuracy column.
    assert not (tmp_path / "critic_accuracy.png").exists()
    assert "critic_accuracy.png" not in md and "accuracy`" not in md
    assert "| SWEET-RL | 1.2 |" in md  # the training table keeps the final loss
    assert (tmp_path / "training_curves.png").exists()


def test_no_loss_history_means_no_training_curves(tmp_path):
    pytest.importorskip("matplotlib")
    results = frontend_results()
    for entry in results["methods"].values():
        if entry["fit"]:
            entry["fit"]["history"] = [
                [0, "train/reward_accuracy", 0.5],
                ["bad"],
                [1, "train/loss", "x"],
            ]
    assert report.write_plots(results, tmp_path) == [
        "success_rate.png",
        "similarity.png",
        "avg_turns.png",
    ]


def test_missing_matplotlib_still_writes_the_text_files(tmp_path, monkeypatch):
    for module in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib...` fail
    with pytest.raises(ImportError, match=r"pip install 'sweetrl-gym\[bench\]'"):
        report.write_report(backend_results(), tmp_path)
    assert json.loads((tmp_path / "results.json").read_text())["name"] == "quick"
    md = (tmp_path / "results.md").read_text()
    assert "| Zero-shot | 22.4% [18.0%, 26.9%]" in md and "## Plots" not in md
    assert not list(tmp_path.glob("*.png"))


def test_json_safe_makes_plain_json():
    value = {
        1: np.float32(0.5),
        "nan": np.float64("nan"),
        "inf": -math.inf,
        "ints": (np.int64(3), True, None),
        "path": tmp_path_like(),
    }
    safe = report.json_safe(value)
    assert safe == {"1": 0.5, "nan": None, "inf": None, "ints": [3, True, None], "path": "a/b"}
    json.dumps(safe, allow_nan=False)


def tmp_path_like():
    from pathlib import PurePosixPath

    return PurePosixPath("a/b")


def test_versions_name_missing_packages(monkeypatch):
    from importlib import metadata

    real = metadata.version

    def version(name):
        if name == "accelerate":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", version)
    versions = report.environment_versions()
    assert versions["accelerate"] == "not installed"
    assert versions["gymnasium"] == real("gymnasium")


def warm_start_results():
    """A run with a warm start: the base is the clone, every method has paired differences."""
    results = backend_results()
    methods = results["methods"]
    warm = {
        "eval": _eval((0.25, 0.17, 0.33), (0.60, 0.55, 0.65), (3.2, 3.0, 3.4)),
        "fit": _fit(120.0, {"train/loss": 0.8}, _history("train/loss")),
        "versus_base": None,
    }
    results["methods"] = {"zero-shot": methods["zero-shot"], "warm-start": warm}
    for name in ["rft", "mt-dpo", "archer", "sweet-rl"]:
        results["methods"][name] = methods[name]
    results["base"] = "warm-start"
    paired = {
        "sweet-rl": (0.10, 0.03, 0.17, 14, 4),  # excludes 0
        "rft": (0.0, -0.05, 0.05, 3, 3),  # includes 0
        "archer": (-0.05, -0.12, 0.01, 2, 8),
    }
    for name, (diff, low, high, gained, lost) in paired.items():
        results["methods"][name]["versus_base"] = {
            "success_rate_diff": diff,
            "success_rate_diff_ci_low": low,
            "success_rate_diff_ci_high": high,
            "gained": gained,
            "lost": lost,
            "num_tasks": 100.0,
        }
    example = {
        "task_id": "backend-train-00042",
        "turns": [
            {
                "action": "Is there a grace period?",
                "reply": "The first 5 days late are free (a grace period).",
                "facts_told": ["grace_days"],
                "missed_by_failures": ["grace_days"],
                "advantage": 0.0123,
            },
            {
                "action": "I WANT TO ANSWER:\ndef late_fee(days_late, balance): ...",
                "reply": "",
                "facts_told": [],
                "missed_by_failures": [],
                "advantage": -0.004,
            },
        ],
    }
    markdown = "\n### The critic on one dialogue\n\n" + critic_example_table(example)
    diagnostics = Diagnostics(record={"critic_example": example}, markdown=markdown)
    results["methods"]["sweet-rl"]["fit"]["diagnostics"] = diagnostics.to_dict()
    return results


def test_a_warm_start_is_the_baseline_with_paired_intervals(tmp_path):
    results = warm_start_results()
    lines = report.compare_to_baseline(results)
    assert [line.split(":")[0] for line in lines] == [
        "RFT vs warm start (BC)",
        "ArCHer vs warm start (BC)",
        "SWEET-RL vs warm start (BC)",
    ]
    sweet = lines[-1]
    assert (
        "+10.0 points" in sweet and "[+3.0, +17.0]" in sweet and "14 tasks gained, 4 lost" in sweet
    )
    assert "excludes 0" in sweet and "includes 0" in lines[0]
    table = report.format_table(results).splitlines()
    assert table[2].startswith("| Zero-shot |") and table[3].startswith("| Warm start (BC) |")
    assert "vs warm start (BC) [95% paired CI]" in table[0]
    sweet_row = next(row for row in table if row.startswith("| SWEET-RL |"))
    assert "+10.0 [+3.0, +17.0]" in sweet_row

    report.write_report(results, tmp_path)
    markdown = (tmp_path / "results.md").read_text()
    assert "## SWEET-RL: diagnostics" in markdown and "The critic on one dialogue" in markdown
    assert "| 1 | Is there a grace period? |" in markdown and "grace_days*" in markdown
    assert "+0.0123" in markdown
    assert _open_png(tmp_path / "learning_progress.png")[0] > 100


def test_a_frontend_comparison_counts_tasks_by_a_margin_and_gives_win_rates():
    results = frontend_results()
    results["base"] = "zero-shot"
    results["methods"]["sweet-rl"]["versus_base"] = {
        "similarity_diff": 0.088,
        "similarity_diff_ci_low": 0.05,
        "similarity_diff_ci_high": 0.12,
        "gained": 30.0,
        "lost": 6.0,
        "win_rate": 0.64,
        "win_rate_ci_low": 0.57,
        "win_rate_ci_high": 0.71,
        "num_tasks": 100.0,
    }
    results["task_sets"] = {"train": {"tasks": 4}, "test": {"tasks": 4}}
    results["buffer"] = {"episodes": 12, "mean_reward": 0.4567, "success_rate": 0.0}
    assert "(12 episodes, mean similarity 0.457)" in report._setup(results)
    counts = {
        "question_pairs": 4, "chosen_obtains_more": 1, "chosen_obtains_fewer": 0, "same": 3,
        "answer_pairs": 6, "chosen_passes_more": 4, "chosen_passes_fewer": 1, "same_tests": 1,
        "mixed_pairs": 2, "unknown_task": 0,
    }  # fmt: skip
    line = pair_signal_text(counts, frontend=True)
    assert "of 6 pairs of two pages, the chosen page is closer to the target" in line
    assert "(by more than 0.02) in 4, farther in 1" in line and "tests" not in line
    (line,) = [x for x in report.compare_to_baseline(results) if x.startswith("SWEET-RL")]
    assert "+0.088 [+0.050, +0.120]" in line
    assert "30 tasks gained, 6 lost by more than 0.02; win rate 64% [57%, 71%]" in line
    assert "excludes 0 (a real difference)" in line


def test_no_warm_start_means_no_learning_progress_plot(tmp_path):
    report.write_report(backend_results(), tmp_path)
    assert not (tmp_path / "learning_progress.png").exists()


def test_a_backend_report_names_the_scoring_of_its_numbers():
    results = backend_results()
    results["config"] = {"env": {"id": "ColBench-Backend-v0", "scoring": "official"}}
    assert "official evaluator's rules" in report.render_markdown(results)
    results["config"]["env"]["scoring"] = "ours"
    assert 'our rules (`env.scoring = "ours"`' in report.render_markdown(results)
    del results["config"]["env"]["scoring"]  # a run from before scorings were named
    assert 'our rules (`env.scoring = "ours"`' in report.render_markdown(results)
