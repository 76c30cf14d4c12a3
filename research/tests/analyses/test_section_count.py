import json

import pytest

from research.analyses.section_count import (
    VARIANTS,
    main,
    section_variants,
    summarize_sections,
)
from sweetrl_gym.simulators.skeleton import PageSketch, SectionSketch


def test_variants_change_only_the_number_of_sections():
    page = PageSketch.default()  # navigation, hero, features, footer
    variants = section_variants(page)
    assert set(variants) == set(VARIANTS)
    assert variants["all_facts"] == page
    kinds = {name: [s.kind for s in v.sections] for name, v in variants.items()}
    assert kinds["one_missing"] == ["navigation", "hero", "footer"]
    assert kinds["two_missing"] == ["navigation", "hero"]
    assert kinds["one_extra"] == ["navigation", "hero", "features", "features", "footer"]
    assert kinds["two_extra"].count("features") == 3 and len(kinds["two_extra"]) == 6
    # The copies look like the section they copy.
    assert len(set(variants["two_extra"].sections[2:5])) == 1


def test_a_variant_that_would_leave_no_section_is_left_out():
    one = PageSketch((SectionSketch("hero"),))
    assert set(section_variants(one)) == {"all_facts", "one_extra", "two_extra"}
    two = PageSketch((SectionSketch("hero"), SectionSketch("footer")))
    assert [s.kind for s in section_variants(two)["one_missing"].sections] == ["hero"]
    assert "two_missing" not in section_variants(two)
    with pytest.raises(ValueError, match="no section"):
        section_variants(PageSketch(()))


def test_the_summary_pairs_each_variant_with_the_all_facts_page():
    def scores(similarity, importance):
        return {"similarity": similarity, "importance": importance}

    rows = [
        {"task_id": f"t{i}", "sections": 3, "all_facts": scores(0.6, 0.0),
         "one_missing": scores(0.5 + 0.01 * i, 2.0), "one_extra": scores(0.65, 1.0)}
        for i in range(10)
    ]  # fmt: skip
    summary = summarize_sections(rows)
    assert summary["num_tasks"] == 10 and "two_missing" not in summary["variants"]
    missing = summary["variants"]["one_missing"]
    assert missing["similarity_change"] == pytest.approx(-0.055)
    assert missing["importance_change"] == pytest.approx(2.0)
    assert missing["similarity_rose"] == 0.0
    extra = summary["variants"]["one_extra"]
    assert extra["similarity_change_ci"] == pytest.approx([0.05, 0.05])
    assert extra["similarity_rose"] == 1.0
    with pytest.raises(ValueError):
        summarize_sections([])


def test_the_analysis_runs_on_rendered_tasks(tmp_path, capsys):
    out = tmp_path / "sections.json"
    assert main(["--tasks", "2", "--output", str(out), "--no-progress"]) == 0
    report = json.loads(out.read_text())
    assert report["num_tasks"] == 2
    for row in report["tasks"]:
        assert row["all_facts"]["importance"] < row["one_extra"]["importance"]
        assert all(0.0 <= row[name]["similarity"] <= 1.0 for name in VARIANTS if name in row)
    assert "one_extra" in capsys.readouterr().out
