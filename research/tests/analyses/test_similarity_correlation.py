"""The similarity-correlation analysis: its pure parts (correlations, perturbations)."""

import pytest

from research.analyses.similarity_correlation import (
    BLANK_PAGE,
    _builtin_page,
    correlations,
    perturb,
)


def test_correlations_of_paired_scores():
    assert correlations([1, 2, 3, 4], [2, 4, 6, 8]) == pytest.approx(
        {"pearson": 1.0, "spearman": 1.0, "n": 4}
    )
    assert correlations([1, 2, 3], [3, 2, 1])["spearman"] == pytest.approx(-1.0)
    monotone = correlations([1, 2, 3, 4], [1, 10, 100, 1000])
    assert monotone["spearman"] == pytest.approx(1.0) and monotone["pearson"] < 0.95
    assert correlations([1, 1, 1], [1, 2, 3])["pearson"] is None
    for xs, ys, match in [
        ([1, 2], [1, 2], "at least 3"),
        ([1, 2, 3], [1, 2], "equal-length"),
        ([1, 2, float("nan")], [1, 2, 3], "finite"),
    ]:
        with pytest.raises(ValueError, match=match):
            correlations(xs, ys)


def test_perturbations_change_the_page_in_the_named_way():
    page = _builtin_page("blue")
    variants = perturb(page)
    assert set(variants) == {
        "colours changed",
        "columns collapsed",
        "text changed",
        "section removed",
        "sections reordered",
        "blank page",
    }
    assert "bg-blue-500" not in variants["colours changed"]
    assert "grid-cols-1" in variants["columns collapsed"]
    assert "Welcome" not in variants["text changed"]
    assert variants["section removed"].count("<section") == page.count("<section") - 1
    reordered = variants["sections reordered"]
    assert sorted(reordered) == sorted(page) and reordered.index("Contact") < reordered.index(
        "Welcome"
    )
    assert variants["blank page"] == BLANK_PAGE
    assert perturb(BLANK_PAGE) == {}
