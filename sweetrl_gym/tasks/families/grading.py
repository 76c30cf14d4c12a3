"""Grading: families of the bundled backend tasks."""

from __future__ import annotations

import random
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family

_ROUNDING = {
    None: "Don't round the result.",
    0: "Round to a whole number.",
    1: "Round to 1 decimal place.",
    2: "Round to 2 decimal places.",
}


def _rounded(expr: str, digits: int | None) -> str:
    if digits is None:
        return expr
    return f"round({expr})" if digits == 0 else f"round({expr}, {digits})"


class LetterGrade(Family):
    name = "letter_grade"
    domain = "grading"
    function_names = ("letter_grade", "get_letter_grade", "score_to_letter")
    params = ("points", "out_of")
    descriptions = (
        "I need a function that turns a test score into a letter grade. I give it the "
        "points earned and the points possible.",
        "Can you write something that gives a student's letter grade from their marks and "
        "the maximum marks?",
    )
    facts = (
        Fact(
            "cutoffs",
            "threshold",
            options=(
                (90, 80, 70, 60),
                (93, 85, 77, 70),
                (85, 75, 65, 50),
                (80, 70, 60, 50),
                (94, 87, 80, 70),
            ),
            default=(90, 80, 70, 60),
            keywords=("cutoff", "cut", "scale", "percent", "band"),
            answer=lambda v: (
                f"A starts at {v[0]}%, B at {v[1]}%, C at {v[2]}% and D at "
                f"{v[3]}%; below that is F."
            ),
        ),
        Fact(
            "plus_minus",
            "rule",
            options=(0, 3, 2),
            default=0,
            keywords=("plus", "minus", "sign", "modifier"),
            answer=lambda v: (
                f"Use plus/minus: the bottom {v} points of a band get a minus "
                f"and the top {v} points a plus (no A+, and F is just F)."
                if v
                else "Just plain letters, no plus or minus grades."
            ),
        ),
        Fact(
            "inclusive",
            "boundary",
            options=(True, False),
            default=True,
            keywords=("exactly", "boundary", "equal", "inclusive", "strictly"),
            answer=lambda v: (
                "A percentage exactly on a cutoff gets that grade."
                if v
                else "You have to be strictly above a cutoff; exactly on it gets the grade below."
            ),
        ),
        Fact(
            "round_first",
            "rounding",
            options=(False, True),
            default=False,
            keywords=("round", "decimal", "whole", "nearest"),
            answer=lambda v: (
                "Round the percentage to the nearest whole number first (halves round up)."
                if v
                else "Use the exact percentage, no rounding."
            ),
        ),
        Fact(
            "out_of_range",
            "edge_case",
            options=("grade", "invalid"),
            default="grade",
            keywords=("invalid", "negative", "over", "extra", "range"),
            answer=lambda v: (
                "Scores below 0 or above the maximum are still graded normally."
                if v == "grade"
                else 'Return "Invalid" if the points are negative or more than the maximum.'
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        ge = ">=" if v["inclusive"] else ">"
        a, b, c, d = v["cutoffs"]
        code = ["import math"] if v["round_first"] else []
        if v["out_of_range"] == "invalid":
            code += ["if points < 0 or points > out_of:", '    return "Invalid"']
        code.append("pct = points * 100 / out_of")
        if v["round_first"]:
            code.append("pct = math.floor(pct + 0.5)")
        code += [
            f'bands = [("A", {a}, 100), ("B", {b}, {a}), ("C", {c}, {b}), ("D", {d}, {c})]',
            "for letter, low, high in bands:",
            f"    if pct {ge} low:",
        ]
        if w := v["plus_minus"]:
            code += [
                f'        if letter != "A" and pct >= high - {w}:',
                '            return letter + "+"',
                f"        if pct < low + {w}:",
                '            return letter + "-"',
            ]
        code += ["        return letter", 'return "F"']
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        out = [(rng.randint(30, 100), 100) for _ in range(10)]
        out += [(rng.randint(10, 50), 50) for _ in range(4)]
        for cut in sorted({c for opts in self.facts[0].options for c in opts}):
            out += [(cut, 100), (cut - 0.5, 100), (cut + 0.25, 100), (cut * 2 + 1, 200)]
            out += [(cut + k, 100) for k in (-4, -3, -2, -1, 1, 2, 3)]
        return [*out, (179, 200), (181, 200), (161, 200), (105, 100), (-5, 100), (52, 50)]


class CourseAverage(Family):
    name = "course_average"
    domain = "grading"
    function_names = ("course_average", "final_grade", "weighted_average")
    params = ("homework", "midterm", "final")
    descriptions = (
        "I need a function that works out a student's overall course score from their "
        "homework scores (a list), their midterm and their final exam.",
        "Can you write something that combines homework, midterm and final exam marks into "
        "one weighted course average?",
    )
    facts = (
        Fact(
            "weights",
            "rate",
            options=((30, 30, 40), (20, 30, 50), (40, 20, 40), (25, 25, 50), (10, 40, 50)),
            default=(30, 30, 40),
            keywords=("weight", "worth", "percent", "count", "much"),
            answer=lambda v: f"Homework counts {v[0]}%, the midterm {v[1]}% and the final {v[2]}%.",
        ),
        Fact(
            "drop_lowest",
            "rule",
            options=(0, 1, 2),
            default=0,
            keywords=("drop", "lowest", "worst", "ignore", "remove"),
            answer=lambda v: (
                "No homework scores are dropped."
                if v == 0
                else f"Drop the lowest {v} homework score{'s' if v > 1 else ''} before "
                "averaging, but always keep at least one."
            ),
        ),
        Fact(
            "no_homework",
            "edge_case",
            options=("zero", "reweight"),
            default="zero",
            keywords=("empty", "missing", "none", "without", "absent"),
            answer=lambda v: (
                "If there's no homework at all, the homework part counts as 0."
                if v == "zero"
                else "If there's no homework at all, use just the exams, with "
                "their weights scaled up to make 100%."
            ),
        ),
        Fact(
            "final_replaces",
            "rule",
            options=(False, True),
            default=False,
            keywords=("replace", "better", "substitute", "higher", "instead"),
            answer=lambda v: (
                "If the final is higher than the midterm, it replaces the midterm score."
                if v
                else "The final never replaces the midterm."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=(2, 1, 0, None),
            default=2,
            keywords=("round", "decimal", "place", "whole"),
            answer=_ROUNDING,
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        wh, wm, wf = v["weights"]
        drop = v["drop_lowest"]
        mid = "max(midterm, final)" if v["final_replaces"] else "midterm"
        empty = (
            f"total = ({wm} * mid + {wf} * final) / 100"
            if v["no_homework"] == "zero"
            else f"total = ({wm} * mid + {wf} * final) / {wm + wf}"
        )
        code = ["scores = sorted(homework)"]
        if drop:
            code.append(f"scores = scores[min({drop}, len(scores) - 1):] if scores else scores")
        code += [
            f"mid = {mid}",
            "if scores:",
            "    hw = sum(scores) / len(scores)",
            f"    total = ({wh} * hw + {wm} * mid + {wf} * final) / 100",
            "else:",
            f"    {empty}",
            f"return {_rounded('total', v['rounding'])}",
        ]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        def hw(n: int) -> list[int]:
            return [rng.randint(40, 100) for _ in range(n)]

        out = [
            (hw(rng.randint(2, 6)), rng.randint(45, 100), rng.randint(45, 100)) for _ in range(18)
        ]
        return [
            *out,
            ([], 70, 85),
            ([], 90, 60),
            ([88], 60, 90),
            ([50, 100], 75, 80),
            ([95, 40, 77], 82, 91),
            ([70, 71, 0, 100], 55, 65),
            ([], 81, 93),
            ([60, 62], 91, 70),
        ]


class CurveScores(Family):
    name = "curve_scores"
    domain = "grading"
    function_names = ("curve_scores", "apply_curve", "curve_grades", "adjust_scores")
    params = ("scores",)
    descriptions = (
        "I need a function that curves a list of exam scores when the class did badly.",
        "Can you write something that applies a curve to my students' test scores? It "
        "takes the list of scores and gives back the curved list.",
    )
    facts = (
        Fact(
            "target",
            "threshold",
            options=(75, 70, 72, 78, 80),
            default=75,
            keywords=("target", "average", "mean", "aim", "goal"),
            answer="The curve should bring the class average to {v}.",
        ),
        Fact(
            "method",
            "rule",
            options=("add", "scale"),
            default="add",
            keywords=("add", "multiply", "scale", "same", "proportion"),
            answer=lambda v: (
                "Add the same number of points to every score."
                if v == "add"
                else "Multiply every score by the same factor."
            ),
        ),
        Fact(
            "cap",
            "threshold",
            options=(True, False),
            default=True,
            keywords=("cap", "100", "exceed", "maximum", "over"),
            answer=lambda v: (
                "No score may go above 100." if v else "Scores may go above 100 after the curve."
            ),
        ),
        Fact(
            "curve_down",
            "edge_case",
            options=(False, True),
            default=False,
            keywords=("already", "lower", "down", "high", "reduce"),
            answer=lambda v: (
                "If the average is already above the target, curve it down to the target too."
                if v
                else "If the average is already at or above the target, leave the scores alone."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=(None, 0, 1, 2),
            default=None,
            keywords=("round", "decimal", "whole", "place"),
            answer=_ROUNDING,
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        t = v["target"]
        new = "s + shift" if v["method"] == "add" else "s * factor"
        if v["cap"]:
            new = f"min(100, {new})"
        code = [
            "if not scores:",
            "    return []",
            "avg = sum(scores) / len(scores)",
        ]
        if not v["curve_down"]:
            code += [
                f"if avg >= {t}:",
                f"    return [{_rounded('s', v['rounding'])} for s in scores]",
            ]
        code.append(f"shift = {t} - avg" if v["method"] == "add" else f"factor = {t} / avg")
        code.append(f"return [{_rounded(new, v['rounding'])} for s in scores]")
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        def scores(lo: int, hi: int) -> list[int | float]:
            return [rng.randint(lo, hi) for _ in range(rng.randint(3, 7))]

        out = [(scores(40, 98),) for _ in range(8)] + [(scores(60, 100),) for _ in range(6)]
        out += [(scores(35, 85),) for _ in range(6)]
        return [
            *out,
            ([],),
            ([55, 60, 95],),
            ([50, 70, 90, 99],),
            ([80, 85, 92],),
            ([62.5, 71.25, 48.0],),
            ([75, 75, 75],),
            ([98, 40, 60, 62],),
            ([70, 72, 78, 80],),
        ]


class DropLowestAverage(Family):
    name = "drop_lowest_average"
    domain = "grading"
    function_names = (
        "average_after_drop",
        "drop_lowest_average",
        "adjusted_average",
        "average_without_lowest",
    )
    params = ("scores",)
    descriptions = (
        "I need a function that averages a student's quiz scores after throwing out the "
        "worst ones.",
        "Can you write something that takes a list of scores, drops the lowest and gives me "
        "the average of the rest?",
    )
    facts = (
        Fact(
            "drop_count",
            "threshold",
            options=(1, 2, 3),
            default=1,
            keywords=("many", "number", "lowest", "drop", "count"),
            answer=lambda v: f"Drop the lowest {v} score{'s' if v > 1 else ''}.",
        ),
        Fact(
            "trim_top",
            "rule",
            options=(False, True),
            default=False,
            keywords=("highest", "top", "best", "both", "trim"),
            answer=lambda v: (
                "Drop the same number of highest scores too."
                if v
                else "Only drop low scores, never high ones."
            ),
        ),
        Fact(
            "too_few",
            "edge_case",
            options=("average_all", "zero", "highest"),
            default="average_all",
            keywords=("few", "enough", "short", "fewer", "left"),
            answer={
                "average_all": "If dropping would leave fewer than two scores, don't drop "
                "anything: average them all.",
                "zero": "If dropping would leave fewer than two scores, return 0.",
                "highest": "If dropping would leave fewer than two scores, return the "
                "highest score.",
            },
        ),
        Fact(
            "empty",
            "edge_case",
            options=(0, -1, "N/A"),
            default=0,
            keywords=("empty", "blank", "nothing", "none"),
            answer=lambda v: (
                f"An empty list gives {v!r}."
                if v != "N/A"
                else 'An empty list gives the string "N/A".'
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=(2, None, 0, 1),
            default=2,
            keywords=("round", "decimal", "place", "whole"),
            answer=_ROUNDING,
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        d = v["drop_count"]
        removed = 2 * d if v["trim_top"] else d
        few = {
            "average_all": f"{_rounded('sum(scores) / len(scores)', v['rounding'])}",
            "zero": "0",
            "highest": "max(scores)",
        }[v["too_few"]]
        keep = f"ordered[{d}:-{d}]" if v["trim_top"] else f"ordered[{d}:]"
        code = [
            "if not scores:",
            f"    return {v['empty']!r}",
            f"if len(scores) < {removed + 2}:",
            f"    return {few}",
            "ordered = sorted(scores)",
            f"kept = {keep}",
            f"return {_rounded('sum(kept) / len(kept)', v['rounding'])}",
        ]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        def scores(n: int) -> list[int | float]:
            return [
                rng.choice([rng.randint(0, 100), round(rng.uniform(40, 100), 1)]) for _ in range(n)
            ]

        out = [(scores(rng.randint(3, 9)),) for _ in range(18)]
        out += [(scores(n),) for n in (1, 2, 3, 4, 5, 6, 7, 8, 10, 12)]
        return [
            *out,
            ([],),
            ([88],),
            ([70, 95],),
            ([50, 60, 100],),
            ([91, 77, 64, 85],),
            ([40, 90, 91, 92, 93, 20, 100],),
        ]


class PassFail(Family):
    name = "pass_fail"
    domain = "grading"
    function_names = ("pass_fail", "passes_course", "check_pass")
    params = ("score", "attendance")
    descriptions = (
        "I need a function that decides whether a student passes, based on their final "
        "score and their attendance percentage.",
        "Can you write something that tells me pass or fail for a student? Both their "
        "score and how often they showed up matter.",
    )
    facts = (
        Fact(
            "pass_mark",
            "threshold",
            options=(60, 50, 65, 70),
            default=60,
            keywords=("pass", "mark", "grade", "threshold", "percent"),
            answer="The pass mark is a score of {v}.",
        ),
        Fact(
            "attendance_min",
            "threshold",
            options=(75, 70, 80, 90),
            default=75,
            keywords=("attendance", "attend", "present", "show"),
            answer="The attendance requirement is {v}%.",
        ),
        Fact(
            "grace",
            "rule",
            options=(0, 1, 2, 5),
            default=0,
            keywords=("borderline", "close", "leeway", "almost", "near"),
            answer=lambda v: (
                "No leeway for borderline scores: compare to the pass mark itself."
                if v == 0
                else f"Borderline students get {v} point"
                f"{'s' if v > 1 else ''} of leeway: compare the score to the pass mark minus {v}."
            ),
        ),
        Fact(
            "inclusive",
            "boundary",
            options=(True, False),
            default=True,
            keywords=("exactly", "equal", "boundary", "inclusive", "strictly"),
            answer=lambda v: (
                "Landing exactly on a requirement (score or attendance) counts as meeting it."
                if v
                else "A student must be strictly above each requirement "
                "(score and attendance); exactly equal isn't enough."
            ),
        ),
        Fact(
            "return_format",
            "return_format",
            options=("bool", "PASS", "Pass"),
            default="bool",
            keywords=("return", "output", "format", "string", "true"),
            answer={
                "bool": "Return True or False.",
                "PASS": 'Return "PASS" or "FAIL" in capitals.',
                "Pass": 'Return "Pass" or "Fail".',
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        ge = ">=" if v["inclusive"] else ">"
        need = v["pass_mark"] - v["grace"]
        ret = {
            "bool": "return passed",
            "PASS": 'return "PASS" if passed else "FAIL"',
            "Pass": 'return "Pass" if passed else "Fail"',
        }[v["return_format"]]
        code = [f"passed = score {ge} {need} and attendance {ge} {v['attendance_min']}", ret]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        out = [(rng.randint(30, 100), rng.randint(50, 100)) for _ in range(10)]
        for mark in (50, 60, 65, 70):
            for g in (0, 1, 2, 5):
                out.append((mark - g, rng.choice([95, 100])))
            out.append((mark - 6, 98))
        for att in (70, 75, 80, 90):
            out += [(rng.choice([85, 90]), att), (rng.choice([88, 92]), att - 1)]
        return [*out, (v["pass_mark"] + 1, v["attendance_min"] + 1), (100, 100), (0, 0)]


FAMILIES: tuple[Family, ...] = (
    LetterGrade(),
    CourseAverage(),
    CurveScores(),
    DropLowestAverage(),
    PassFail(),
)
