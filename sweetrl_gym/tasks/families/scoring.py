"""Scoring: families of the bundled backend tasks."""

from __future__ import annotations

import random
import string
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family


class GamePoints(Family):
    name = "game_points"
    domain = "scoring"
    function_names = ("game_score", "score_events", "total_points")
    params = ("events",)
    descriptions = (
        "I need a function that adds up a player's score from the list of things that happened "
        "in a level: event strings like 'coin', 'enemy' and 'hit' (other events don't score).",
        "Can you write something that totals the points for my platformer game from its event "
        "log? The log is a list of strings such as 'coin', 'enemy', 'hit' or 'jump'.",
        "Write a python function that scores a game run from a list of event names ('coin', "
        "'enemy', 'hit'; anything else is ignored).",
    )
    facts = (
        Fact(
            "coin",
            "rate",
            options=(1, 5, 10),
            default=1,
            keywords=("coin", "coins", "collect", "pickup"),
            answer="Each coin is worth {v} points.",
        ),
        Fact(
            "enemy",
            "rate",
            options=(10, 20, 50),
            default=10,
            keywords=("enemy", "enemies", "defeat", "kill", "monster"),
            answer="Each enemy defeated is worth {v} points.",
        ),
        Fact(
            "hit_penalty",
            "rate",
            options=(0, 5, 10, 25),
            default=0,
            keywords=("hit", "damage", "penalty", "lose", "hurt", "subtract"),
            answer=lambda v: (
                "Getting hit costs no points."
                if v == 0
                else f"Each hit subtracts {v} points (the total may go negative)."
            ),
        ),
        Fact(
            "streak",
            "rule",
            options=(None, 3, 5),
            default=None,
            keywords=("streak", "row", "consecutive", "combo", "double"),
            answer=lambda v: (
                "There is no streak multiplier."
                if v is None
                else f"After {v} coins or enemies in a row without a hit, every further coin or "
                "enemy is worth double until the next hit."
            ),
        ),
        Fact(
            "bonus_at",
            "threshold",
            options=(None, 50, 100, 200),
            default=None,
            keywords=("bonus", "reach", "extra", "reward", "target"),
            answer=lambda v: (
                "There is no end-of-level bonus."
                if v is None
                else f"If the total reaches {v} points or more, add a 25-point bonus at the end."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        lines = ["total = 0", "run = 0", "for event in events:",
                 '    if event in ("coin", "enemy"):', "        run += 1",
                 f'        points = {v["coin"]} if event == "coin" else {v["enemy"]}']  # fmt: skip
        if v["streak"] is not None:
            lines += [f"        if run > {v['streak']}:", "            points *= 2"]
        lines += ["        total += points", '    elif event == "hit":', "        run = 0"]
        if v["hit_penalty"]:
            lines.append(f"        total -= {v['hit_penalty']}")
        if v["bonus_at"] is not None:
            lines += [f"if total >= {v['bonus_at']}:", "    total += 25"]
        return "\n".join([*lines, "return total"])

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        kinds = ["coin", "coin", "coin", "enemy", "enemy", "hit", "jump"]
        rows = [[rng.choice(kinds) for _ in range(rng.randint(0, 18))] for _ in range(24)]
        rows += [
            [rng.choice(["enemy", "enemy", "coin", "hit"]) for _ in range(30)] for _ in range(4)
        ]
        rows += [["enemy"] * k for k in (3, 5, 8, 12, 16, 22, 30)]
        rows += [["coin"] * 7, ["coin"] * 40, ["coin"] * 4 + ["hit"] + ["coin"] * 4, ["hit"], []]
        return [(r,) for r in rows]


class ReviewScore(Family):
    name = "review_score"
    domain = "scoring"
    function_names = ("review_score", "product_rating", "weighted_rating")
    params = ("reviews",)
    descriptions = (
        "I need a function that turns a product's customer reviews into one overall rating. Each "
        "review is (stars, days_old, verified).",
        "Can you write something that computes the score we show on a product page from its "
        "reviews? I'll pass a list of (stars, days_old, verified) tuples.",
    )
    facts = (
        Fact(
            "verified_weight",
            "rate",
            options=(1, 2, 3),
            default=1,
            keywords=("verified", "purchase", "buyer", "trusted"),
            answer=lambda v: (
                "Verified reviews count the same as any other."
                if v == 1
                else f"A verified review counts {v} times as much as an unverified one."
            ),
        ),
        Fact(
            "old_after",
            "threshold",
            options=(None, 90, 180, 365),
            default=None,
            keywords=("old", "recent", "age", "older", "newer"),
            answer=lambda v: (
                "Old reviews count just as much as new ones."
                if v is None
                else f"Reviews more than {v} days old count half as much."
            ),
        ),
        Fact(
            "min_reviews",
            "edge_case",
            options=(1, 3, 5),
            default=1,
            keywords=("minimum", "fewer", "enough", "few", "empty"),
            answer=lambda v: (
                "With no reviews at all, return 0."
                if v == 1
                else f"With fewer than {v} reviews, return 0."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=(1, 2, "half"),
            default=1,
            keywords=("round", "decimal", "half", "precision"),
            answer=lambda v: (
                "Round to the nearest half point (like 3.5)."
                if v == "half"
                else f"Round to {v} decimal place{'s' if v > 1 else ''}."
            ),
        ),
        Fact(
            "scale",
            "unit",
            options=(5, 10, 100),
            default=5,
            keywords=("scale", "out", "stars", "range", "convert"),
            answer=lambda v: (
                "Keep the score on the 1-5 star scale."
                if v == 5
                else f"Report the score out of {v} (so 5 stars is {v})."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        weight = (
            "1" if v["verified_weight"] == 1 else f"({v['verified_weight']} if verified else 1)"
        )
        lines = [f"if len(reviews) < {v['min_reviews']}:", "    return 0",
                 "total = weight_sum = 0.0", "for stars, days_old, verified in reviews:",
                 f"    weight = {weight}"]  # fmt: skip
        if v["old_after"] is not None:
            lines += [f"    if days_old > {v['old_after']}:", "        weight = weight / 2"]
        scale = "" if v["scale"] == 5 else f" * {v['scale']} / 5"
        lines += ["    total += stars * weight", "    weight_sum += weight",
                  f"score = total / weight_sum{scale}"]  # fmt: skip
        if v["rounding"] == "half":
            return "\n".join([*lines, "return round(score * 2) / 2"])
        return "\n".join([*lines, f"return round(score, {v['rounding']})"])

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        def review() -> tuple[int, int, bool]:
            return (rng.randint(1, 5), rng.choice([3, 30, 100, 200, 400, 800]), rng.random() < 0.5)

        rows = [[review() for _ in range(rng.randint(1, 9))] for _ in range(28)]
        rows += [[], [(5, 10, True)], [(4, 10, False), (2, 500, True)], [(1, 50, False)] * 3]
        rows += [[(5, 400, True), (1, 20, False), (3, 150, True), (2, 95, False)]]
        rows += [[(5, 200, False), (1, 30, False), (5, 250, True), (2, 3, False), (4, 300, True)]]
        return [(r,) for r in rows]


_COMMON = ("password", "qwerty", "123456", "letmein", "admin")
_LABELS = "'weak' for 0-2 points, 'medium' for 3-4, 'strong' for 5 or more"


class PasswordStrength(Family):
    name = "password_strength"
    domain = "scoring"
    function_names = ("password_strength", "score_password", "rate_password")
    params = ("password",)
    descriptions = (
        "I need a function that rates how strong a password is.",
        "Can you write a password strength checker for our sign-up page?",
        "Write a python function that scores a password so we can warn people about weak ones.",
    )
    facts = (
        Fact(
            "min_len",
            "threshold",
            options=(8, 6, 10, 12),
            default=8,
            keywords=("length", "minimum", "short", "least"),
            answer="A password of at least {v} characters earns one point.",
        ),
        Fact(
            "long_len",
            "threshold",
            options=(12, 14, 16, 20),
            default=12,
            keywords=("long", "longer", "extra", "more"),
            answer="Reaching {v} characters earns one more point.",
        ),
        Fact(
            "classes",
            "rule",
            options=("four", "three"),
            default="four",
            keywords=("class", "types", "mix", "uppercase", "digits", "symbols"),
            answer=lambda v: (
                "Add one point each for a lowercase letter, an uppercase letter, a "
                "digit and a symbol."
                if v == "four"
                else "Add one point each for a letter (any case), a digit and a symbol."
            ),
        ),
        Fact(
            "common",
            "rule",
            options=("none", "zero", "minus2"),
            default="none",
            keywords=("common", "dictionary", "word", "contains", "blacklist"),
            answer=lambda v: {
                "none": "Don't check for common words.",
                "zero": f"If it contains any of {', '.join(_COMMON)} (any case), the score is 0.",
                "minus2": f"If it contains any of {', '.join(_COMMON)} (any case), subtract 2 "
                "points, but not below 0.",
            }[v],
        ),
        Fact(
            "output",
            "return_format",
            options=("number", "label", "tuple"),
            default="number",
            keywords=("return", "label", "number", "weak", "strong", "tuple"),
            answer=lambda v: {
                "number": "Return the point total as a number.",
                "label": f"Return a label: {_LABELS}.",
                "tuple": f"Return a tuple (points, label), with {_LABELS}.",
            }[v],
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        if v["classes"] == "four":
            classes = ["c.islower()", "c.isupper()", "c.isdigit()", "not c.isalnum()"]
        else:
            classes = ["c.isalpha()", "c.isdigit()", "not c.isalnum()"]
        lines = [f"score = int(len(password) >= {v['min_len']}) + int(len(password) >= "
                 f"{v['long_len']})"]  # fmt: skip
        lines += [f"score += any({c} for c in password)" for c in classes]
        if v["common"] != "none":
            fix = "score = 0" if v["common"] == "zero" else "score = max(score - 2, 0)"
            lines += [f"if any(w in password.lower() for w in {_COMMON!r}):", f"    {fix}"]
        label = '"weak" if score <= 2 else "medium" if score <= 4 else "strong"'
        ret = {"number": "score", "label": "label", "tuple": "(score, label)"}[v["output"]]
        if v["output"] != "number":
            lines.append(f"label = {label}")
        return "\n".join([*lines, f"return {ret}"])

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        pools = [string.ascii_lowercase, string.ascii_uppercase, string.digits, "!@#$%&*?"]
        rows = []
        for n in range(4, 23):
            for k in range(1, 5):
                kinds = rng.sample(pools, k)
                chars = [rng.choice(p) for p in kinds]
                chars += [rng.choice(rng.choice(kinds)) for _ in range(n - k)]
                rng.shuffle(chars)
                rows.append("".join(chars))
        rows += ["password", "Password123!", "MyQwerty#2024", "letmein", "adminADMIN99", "",
                 "MyPassword#2024isGreat!", "qwerty!42QWERTYlongone", "Tr0ub4dor&3", "abc",
                 "correcthorsebatterystaple", "X9!kP2#mQ7$z", "SunnyDay2023", "aB3$"]  # fmt: skip
        return [(p,) for p in rows]


_CUTOFFS = {"who": (18.5, 25, 30), "asian": (18.5, 23, 27.5)}
_BMI_LABELS = {
    "title": ("Underweight", "Normal", "Overweight", "Obese"),
    "lower": ("underweight", "normal", "overweight", "obese"),
    "healthy": ("Underweight", "Healthy weight", "Overweight", "Obese"),
    "who_terms": ("Underweight", "Normal weight", "Overweight", "Obesity"),
}
_UNITS = {
    "metric": ("weight / height ** 2", "kilograms and metres"),
    "metric_cm": ("weight / (height / 100) ** 2", "kilograms and centimetres"),
    "imperial": ("703 * weight / height ** 2", "pounds and inches (BMI = 703 * lb / in^2)"),
}


class BmiCategory(Family):
    name = "bmi_category"
    domain = "scoring"
    function_names = ("bmi_category", "classify_bmi", "weight_category")
    params = ("weight", "height")
    descriptions = (
        "I need a function that tells someone their BMI category from their weight and height.",
        "Can you write something for my fitness app that classifies a person's body mass index?",
        "Write a python function that returns which BMI group a person falls into.",
    )
    facts = (
        Fact(
            "units",
            "unit",
            options=tuple(_UNITS),
            default="metric",
            keywords=("units", "kilograms", "pounds", "metres", "inches", "centimetres"),
            answer=lambda v: f"Weight and height come in {_UNITS[v][1]}.",
        ),
        Fact(
            "cutoffs",
            "threshold",
            options=tuple(_CUTOFFS),
            default="who",
            keywords=("cutoffs", "ranges", "overweight", "obese", "asian"),
            answer=lambda v: (
                "Use the standard cut-offs: 18.5, 25 and 30."
                if v == "who"
                else "Use the Asian cut-offs: 18.5, 23 and 27.5."
            ),
        ),
        Fact(
            "on_cutoff",
            "boundary",
            options=("upper", "lower"),
            default="upper",
            keywords=("exactly", "boundary", "borderline", "belongs", "edge"),
            answer=lambda v: (
                "A BMI exactly on a cut-off belongs to the higher category."
                if v == "upper"
                else "A BMI exactly on a cut-off belongs to the lower category."
            ),
        ),
        Fact(
            "labels",
            "return_format",
            options=tuple(_BMI_LABELS),
            default="title",
            keywords=("labels", "names", "call", "wording", "normal", "healthy"),
            answer=lambda v: "Name the categories " + ", ".join(_BMI_LABELS[v]) + ".",
        ),
        Fact(
            "round_first",
            "rounding",
            options=(None, 1, 0),
            default=None,
            keywords=("round", "decimal", "precision", "whole"),
            answer={
                None: "Classify the exact BMI, without rounding.",
                1: "Round the BMI to one decimal before classifying it.",
                0: "Round the BMI to a whole number before classifying it.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        op = "<" if v["on_cutoff"] == "upper" else "<="
        (low, mid, high), labels = _CUTOFFS[v["cutoffs"]], _BMI_LABELS[v["labels"]]
        lines = ["if weight <= 0 or height <= 0:", '    return "invalid"',
                 f"bmi = {_UNITS[v['units']][0]}"]  # fmt: skip
        if v["round_first"] is not None:
            lines.append(f"bmi = round(bmi, {v['round_first']})")
        for cut, label in zip((low, mid, high), labels):
            lines += [f"if bmi {op} {cut}:", f"    return {label!r}"]
        return "\n".join([*lines, f"return {labels[3]!r}"])

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        unit = v["units"]
        heights = {"metric": [1.55, 1.68, 1.75, 1.9], "metric_cm": [155, 168, 175, 190],
                   "imperial": [61, 66, 69, 75]}[unit]  # fmt: skip

        def weight_for(bmi: float, h: float) -> float:
            scale = {"metric": 1, "metric_cm": 1e-4, "imperial": 1 / 703}[unit]
            return round(bmi * h**2 * scale, 2)

        cuts = sorted({c for cs in _CUTOFFS.values() for c in cs})
        targets = [c + d for c in cuts for d in (-0.6, -0.3, -0.03, 0.03, 0.3, 0.6)]
        targets += [15, 21, 35]
        rows = [
            (weight_for(t, h), h) for t, h in zip(targets, rng.choices(heights, k=len(targets)))
        ]
        exact = {
            "metric": [(4 * c, 2.0) for c in cuts],
            "metric_cm": [(4 * c, 200) for c in cuts],
            "imperial": [(85.5, 57), (152.0, 76)],
        }
        return [*rows, *exact[unit], (0, 1.7), (70, 0)]  # fmt: skip


class LeaderboardRank(Family):
    name = "leaderboard_rank"
    domain = "scoring"
    function_names = ("rank_players", "leaderboard", "build_leaderboard")
    params = ("scores",)
    descriptions = (
        "I need a function that turns a list of (name, score) pairs into a ranked leaderboard.",
        "Can you write something that ranks the players in our tournament from their scores? "
        "I'll give you a list of (name, score) tuples.",
        "Write a python function that builds the standings table from players' results, given "
        "as (name, score) pairs.",
    )
    facts = (
        Fact(
            "order",
            "ordering",
            options=("desc", "asc"),
            default="desc",
            keywords=("higher", "lower", "better", "best", "ascending", "descending"),
            answer=lambda v: (
                "Higher scores are better."
                if v == "desc"
                else "Lower scores are better (like golf)."
            ),
        ),
        Fact(
            "tie_order",
            "tie_break",
            options=("entry", "name", "latest"),
            default="entry",
            keywords=("tie", "tied", "list", "alphabetical", "listed"),
            answer={
                "entry": "Players with equal scores are listed in their original input order.",
                "name": "Players with equal scores are listed alphabetically by name.",
                "latest": "Players with equal scores are listed latest entry first (reverse "
                "input order).",
            },
        ),
        Fact(
            "ranking",
            "rule",
            options=("standard", "dense", "ordinal"),
            default="standard",
            keywords=("rank", "numbering", "skip", "dense", "share"),
            answer=lambda v: {
                "standard": "Tied players share a rank and the next rank is skipped (1, 2, 2, 4).",
                "dense": "Tied players share a rank and no rank is skipped (1, 2, 2, 3).",
                "ordinal": "Every player gets their own rank even on a tie (1, 2, 3, 4).",
            }[v],
        ),
        Fact(
            "top_k",
            "threshold",
            options=(None, 3, 5, 10),
            default=None,
            keywords=("top", "only", "show", "many", "cut"),
            answer=lambda v: (
                "Include every player."
                if v is None
                else f"Only include the first {v} entries of the table."
            ),
        ),
        Fact(
            "output",
            "return_format",
            options=("triples", "pairs", "strings", "dicts"),
            default="triples",
            keywords=("return", "tuple", "string", "row", "entry", "format"),
            answer=lambda v: {
                "triples": "Return a list of (rank, name, score) tuples.",
                "pairs": "Return a list of (rank, name) tuples.",
                "strings": "Return a list of strings like '1. Alice (42)'.",
                "dicts": "Return a list of dicts with keys 'rank', 'name' and 'score'.",
            }[v],
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        key = "-p[1]" if v["order"] == "desc" else "p[1]"
        key = f"({key}, p[0])" if v["tie_order"] == "name" else key
        players = "scores[::-1]" if v["tie_order"] == "latest" else "scores"
        rank = {"standard": ["    if score != prev:", "        rank = i + 1"],
                "dense": ["    if score != prev:", "        rank += 1"],
                "ordinal": ["    rank = i + 1"]}[v["ranking"]]  # fmt: skip
        row = {"triples": "(rank, name, score)", "pairs": "(rank, name)",
               "strings": 'f"{rank}. {name} ({score})"',
               "dicts": '{"rank": rank, "name": name, "score": score}'}[v["output"]]  # fmt: skip
        top = "" if v["top_k"] is None else f"[:{v['top_k']}]"
        lines = [f"ordered = sorted({players}, key=lambda p: {key}){top}", "table = []",
                 "rank, prev = 0, None", "for i, (name, score) in enumerate(ordered):", *rank,
                 "    prev = score", f"    table.append({row})", "return table"]  # fmt: skip
        return "\n".join(lines)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        names = ["Zoe", "Adam", "Mia", "Bob", "Eve", "Liam", "Cara", "Omar", "Ivy", "Dan", "Kai",
                 "Noor", "Finn", "Ruth"]  # fmt: skip
        rows = []
        for _ in range(26):
            people = rng.sample(names, rng.randint(2, 13))
            rows.append([(n, rng.choice([10, 20, 20, 30, 30, 40, 55])) for n in people])
        rows += [[("Zoe", 50), ("Adam", 50), ("Mia", 40), ("Bob", 30)],
                 [("Eve", 10), ("Cara", 20), ("Bob", 20), ("Ivy", 30), ("Dan", 40), ("Omar", 5)],
                 [("Mia", 7), ("Liam", 7), ("Adam", 7), ("Zoe", 3), ("Bob", 9), ("Eve", 1)],
                 [("Solo", 1)], []]  # fmt: skip
        return [(r,) for r in rows]


_TIER_LABELS = {
    "words": ("low", "medium", "high"),
    "title": ("Low Risk", "Medium Risk", "High Risk"),
    "letters": ("A", "B", "C"),
    "numbers": (1, 2, 3),
}


class RiskTier(Family):
    name = "risk_tier"
    domain = "scoring"
    function_names = ("risk_tier", "credit_risk", "loan_risk_level")
    params = ("credit_score", "income", "debt")
    descriptions = (
        "I need a function that puts a loan applicant into a risk tier from their credit score, "
        "income and debt.",
        "Can you write something that decides how risky a borrower is based on a few numbers?",
        "Write a python function that sorts applicants into risk levels for our lending team.",
    )
    facts = (
        Fact(
            "low_from",
            "threshold",
            options=(700, 720, 750),
            default=700,
            keywords=("low", "safe", "excellent", "best"),
            answer="A credit score of {v} or more counts as low risk.",
        ),
        Fact(
            "high_below",
            "threshold",
            options=(600, 580, 650),
            default=600,
            keywords=("high", "poor", "bad", "worst"),
            answer="A credit score below {v} counts as high risk (in between is medium).",
        ),
        Fact(
            "dti_limit",
            "threshold",
            options=(0.43, 0.36, 0.5),
            default=0.43,
            keywords=("debt", "income", "ratio", "dti", "burden"),
            answer=lambda v: (
                f"A debt-to-income ratio above {v:.0%} is too high (zero or "
                "negative income counts as too high)."
            ),
        ),
        Fact(
            "dti_effect",
            "rule",
            options=("bump", "force_high"),
            default="bump",
            keywords=("dominates", "override", "matter", "affect", "combine"),
            answer=lambda v: (
                "Too high a debt ratio moves the applicant one tier riskier."
                if v == "bump"
                else "Too high a debt ratio makes the applicant high risk no matter "
                "the credit score."
            ),
        ),
        Fact(
            "labels",
            "return_format",
            options=tuple(_TIER_LABELS),
            default="words",
            keywords=("return", "label", "tier", "called", "name"),
            answer=lambda v: (
                "Return "
                + ", ".join(repr(x) for x in _TIER_LABELS[v])
                + " for low, medium and high risk."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        fix = "tier = min(tier + 1, 2)" if v["dti_effect"] == "bump" else "tier = 2"
        return f"""
        if credit_score >= {v["low_from"]}:
            tier = 0
        elif credit_score >= {v["high_below"]}:
            tier = 1
        else:
            tier = 2
        if income <= 0 or debt / income > {v["dti_limit"]}:
            {fix}
        return {_TIER_LABELS[v["labels"]]!r}[tier]
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        scores = [520, 579, 580, 599, 600, 620, 649, 650, 699, 700, 719, 720, 749, 750, 800]
        ratios = [0.1, 0.3, 0.4, 0.45, 0.6]
        rows = []
        for score in scores:
            for ratio in (0.1, rng.choice(ratios)):
                income = rng.choice([30000, 48000, 60000, 85000])
                rows.append((score, income, round(income * ratio)))
        debt = round(50000 * v["dti_limit"])
        rows += [(760, 50000, debt), (760, 50000, debt + 100), (680, 50000, debt),
                 (680, 0, 1000), (560, 40000, 2000)]  # fmt: skip
        return rows


FAMILIES: tuple[Family, ...] = (
    GamePoints(), ReviewScore(), PasswordStrength(), BmiCategory(), LeaderboardRank(), RiskTier(),
)  # fmt: skip
