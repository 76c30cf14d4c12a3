"""Scheduling: families of the bundled backend tasks."""

from __future__ import annotations

import random
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"


class ParkingFee(Family):
    name = "parking_fee"
    domain = "scheduling"
    function_names = ("parking_fee", "parking_charge", "compute_parking_fee")
    params = ("minutes",)
    descriptions = (
        "I need a function that works out what to charge at my parking lot from how many "
        "minutes a car stayed. Short stays are free.",
        "Can you write something that calculates a parking fee from the minutes parked? "
        "We charge by the hour and people who just pop in don't pay.",
    )
    facts = (
        Fact(
            "free_minutes",
            "threshold",
            options=(10, 15, 30, 60),
            default=15,
            keywords=("free", "first", "grace", "short"),
            answer="Stays of up to {v} minutes are free.",
        ),
        Fact(
            "free_deducted",
            "rule",
            options=(False, True),
            default=False,
            keywords=("deduct", "subtract", "beyond", "longer", "whole", "still"),
            answer=lambda v: (
                "The free minutes are always free: only time beyond them is charged."
                if v
                else "Once a stay goes past the free period, the whole stay "
                "is charged, free minutes included."
            ),
        ),
        Fact(
            "hourly_rate",
            "rate",
            options=(2.0, 2.5, 3.0, 4.5),
            default=2.5,
            keywords=("rate", "price", "dollar", "cost", "much"),
            answer=lambda v: f"Parking costs ${v:.2f} an hour.",
        ),
        Fact(
            "partial",
            "rounding",
            options=("hour", "exact", "half_hour"),
            default="hour",
            keywords=("partial", "started", "part", "increment", "fraction"),
            answer={
                "hour": "Every started hour is charged as a full hour.",
                "exact": "Charge by the minute, pro rata (no rounding up of time).",
                "half_hour": "Round the time up to the next half hour and charge half "
                "the hourly rate per half hour.",
            },
        ),
        Fact(
            "daily_cap",
            "threshold",
            options=(None, 12.0, 15.0, 20.0),
            default=None,
            keywords=("cap", "maximum", "max", "daily", "limit"),
            answer=lambda v: (
                "There's no daily maximum."
                if v is None
                else f"Nobody pays more than ${v:.2f} (daily maximum)."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        billable = f"minutes - {v['free_minutes']}" if v["free_deducted"] else "minutes"
        hours = {
            "hour": "math.ceil(billable / 60)",
            "exact": "billable / 60",
            "half_hour": "math.ceil(billable / 30) / 2",
        }[v["partial"]]
        code = [
            *(["import math"] if v["partial"] != "exact" else []),
            f"if minutes <= {v['free_minutes']}:",
            "    return 0.0",
            f"billable = {billable}",
            f"fee = {hours} * {v['hourly_rate']}",
            *([] if v["daily_cap"] is None else [f"fee = min(fee, {v['daily_cap']})"]),
            "return round(fee, 2)",
        ]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        free = v["free_minutes"]
        marks = [0, 5, free - 1, free, free + 1, free + 7, 59, 60, 61, 75, 89, 90, 91, 120]
        marks += [free + 29, free + 30, free + 31, free + 60, free + 61, 300, 480, 720, 1000]
        return [(m,) for m in marks] + [(rng.randint(1, 1400),) for _ in range(12)]


class MeetingOverlap(Family):
    name = "meeting_overlap"
    domain = "scheduling"
    function_names = ("meetings_clash", "meetings_overlap", "has_conflict", "check_overlap")
    params = ("start_a", "end_a", "start_b", "end_b")
    descriptions = (
        'I need a function that checks whether two meetings clash. Times are "HH:MM" '
        "strings: the start and end of the first meeting, then of the second.",
        "Can you write something that tells me if two calendar events overlap, given their "
        "start and end times as hour:minute strings?",
    )
    facts = (
        Fact(
            "touching",
            "boundary",
            options=(False, True),
            default=False,
            keywords=("touch", "adjacent", "exactly", "back", "right"),
            answer=lambda v: (
                "Meetings exactly the required gap apart (e.g. back-to-back) "
                + ("still count as a clash." if v else "are fine, not a clash.")
            ),
        ),
        Fact(
            "buffer",
            "threshold",
            options=(0, 5, 10, 15),
            default=0,
            keywords=("buffer", "gap", "break", "between", "travel"),
            answer=lambda v: (
                "No gap is needed between meetings."
                if v == 0
                else f"Meetings need at least {v} minutes between them, otherwise they clash."
            ),
        ),
        Fact(
            "overnight",
            "edge_case",
            options=(False, True),
            default=False,
            keywords=("midnight", "overnight", "wrap", "before", "invalid"),
            answer=lambda v: (
                "A meeting whose end is before its start runs past midnight."
                if v
                else "A meeting whose end is before its start is a typo; it never clashes."
            ),
        ),
        Fact(
            "zero_length",
            "edge_case",
            options=("normal", "ignore"),
            default="normal",
            keywords=("zero", "length", "empty", "instant", "same"),
            answer=lambda v: (
                "A zero-length meeting (start equals end) is checked like any other."
                if v == "normal"
                else "A zero-length meeting (start equals end) never clashes with anything."
            ),
        ),
        Fact(
            "return_format",
            "return_format",
            options=("bool", "yes_no", "text"),
            default="bool",
            keywords=("return", "output", "format", "true", "string"),
            answer={
                "bool": "Return True or False.",
                "yes_no": 'Return "yes" or "no".',
                "text": 'Return "conflict" or "ok".',
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        le = "<=" if v["touching"] else "<"
        gap = f" + {v['buffer']}" if v["buffer"] else ""
        yes, no = {
            "bool": ("True", "False"),
            "yes_no": ('"yes"', '"no"'),
            "text": ('"conflict"', '"ok"'),
        }[v["return_format"]]
        code = [
            "def mins(t):",
            '    h, m = t.split(":")',
            "    return int(h) * 60 + int(m)",
            "",
            "a0, a1, b0, b1 = mins(start_a), mins(end_a), mins(start_b), mins(end_b)",
        ]
        if v["zero_length"] == "ignore":
            code += ["if a0 == a1 or b0 == b1:", f"    return {no}"]
        if v["overnight"]:
            code += [
                "if a1 < a0:",
                "    a1 += 1440",
                "if b1 < b0:",
                "    b1 += 1440",
                "for shift in (-1440, 0, 1440):",
                f"    if a0 {le} b1 + shift{gap} and b0 + shift {le} a1{gap}:",
                f"        return {yes}",
                f"return {no}",
            ]
        else:
            code += [
                "if a1 < a0 or b1 < b0:",
                f"    return {no}",
                f"if a0 {le} b1{gap} and b0 {le} a1{gap}:",
                f"    return {yes}",
                f"return {no}",
            ]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        out = []
        for _ in range(14):
            a0, b0 = rng.randrange(480, 1080, 15), rng.randrange(480, 1080, 15)
            a1, b1 = a0 + rng.choice([30, 45, 60, 90]), b0 + rng.choice([15, 30, 60, 120])
            out.append((a0, a1, b0, b1))
        for gap in (0, 5, 10, 15, v["buffer"] - 1, v["buffer"] + 1):
            a0 = rng.randrange(540, 900, 30)
            out += [
                (a0, a0 + 60, a0 + 60 + gap, a0 + 120 + gap),
                (a0 + 60 + gap, a0 + 90 + gap, a0, a0 + 60),
            ]
        out += [
            (600, 600, 570, 660),
            (600, 660, 630, 630),
            (600, 600, 600, 600),
            (1380, 60, 30, 90),
            (1380, 60, 1320, 1400),
            (1410, 30, 600, 700),
            (1320, 1380, 1385, 20),
            (600, 540, 560, 620),
            (30, 60, 1400, 35),
        ]
        return [tuple(_hhmm(m) for m in row) for row in out]


class ShiftPay(Family):
    name = "shift_pay"
    domain = "scheduling"
    function_names = ("shift_pay", "compute_shift_pay", "pay_for_shift")
    params = ("start_hour", "end_hour", "hourly_rate", "day")
    descriptions = (
        "I need a function that works out what a worker earns for one shift, given the start "
        "and end hour, their hourly rate and the day the shift starts. Night hours and "
        "weekends pay extra.",
        "Can you write something that calculates shift pay, with a bonus for night work and "
        "for weekend shifts? Shifts can run past midnight.",
    )
    facts = (
        Fact(
            "night_start",
            "threshold",
            options=(20, 21, 22, 23),
            default=22,
            keywords=("start", "begin", "time", "clock", "period"),
            answer="Night hours run from {v}:00 until 6:00 in the morning.",
        ),
        Fact(
            "night_multiplier",
            "rate",
            options=(1.25, 1.5, 2.0),
            default=1.25,
            keywords=("night", "premium", "multiplier", "extra", "nighttime"),
            answer="Night hours pay {v} times the normal rate.",
        ),
        Fact(
            "weekend_multiplier",
            "rate",
            options=(1.25, 1.5, 2.0),
            default=1.5,
            keywords=("weekend", "saturday", "sunday"),
            answer="Shifts that start on a Saturday or Sunday pay {v} times the normal rate.",
        ),
        Fact(
            "stacking",
            "rule",
            options=("multiply", "higher", "add"),
            default="multiply",
            keywords=("stack", "combine", "both", "together", "overlap"),
            answer={
                "multiply": "When night and weekend both apply, multiply the two bonuses.",
                "higher": "When night and weekend both apply, only the bigger bonus counts.",
                "add": "When night and weekend both apply, add the two extras together "
                "(e.g. 1.5x and 1.25x make 1.75x).",
            },
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "dollar", "floor"),
            default="cents",
            keywords=("round", "cents", "decimal", "down"),
            answer={
                "cents": "Round the pay to cents.",
                "dollar": "Round the pay to the nearest whole dollar.",
                "floor": "Round the pay down to a whole dollar.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        n, w = v["night_multiplier"], v["weekend_multiplier"]
        both = {"multiply": f"{n} * {w}", "higher": f"max({n}, {w})", "add": f"{n} + {w} - 1"}[
            v["stacking"]
        ]
        final = {"cents": "round(pay, 2)", "dollar": "round(pay)", "floor": "math.floor(pay)"}[
            v["rounding"]
        ]
        code = [
            *(["import math"] if v["rounding"] == "floor" else []),
            'weekend = day.strip().lower()[:3] in ("sat", "sun")',
            "pay = 0.0",
            "for i in range((end_hour - start_hour) % 24):",
            "    hour = (start_hour + i) % 24",
            f"    night = hour >= {v['night_start']} or hour < 6",
            "    if night and weekend:",
            f"        factor = {both}",
            "    elif night:",
            f"        factor = {n}",
            "    elif weekend:",
            f"        factor = {w}",
            "    else:",
            "        factor = 1.0",
            "    pay += hourly_rate * factor",
            f"return {final}",
        ]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        rates = [15.0, 18.5, 22.0, 12.75, 30.0]
        days = ["Monday", "Tue", "Wednesday", "Friday", "Saturday", "Sunday", "sat", "Sun"]
        out = [
            (s, (s + rng.randint(4, 10)) % 24, rng.choice(rates), rng.choice(days))
            for s in (rng.randint(0, 23) for _ in range(14))
        ]
        for day in ("Thursday", "Saturday", "Sunday"):
            out += [
                (16, 0, 20.0, day),
                (19, 23, 17.5, day),
                (22, 6, 19.0, day),
                (20, 2, 25.0, day),
                (23, 7, 16.0, day),
                (9, 17, 21.0, day),
            ]
        return out


class QueueWait(Family):
    name = "queue_wait"
    domain = "scheduling"
    function_names = ("queue_wait", "estimate_wait", "wait_time")
    params = ("people_ahead", "servers")
    descriptions = (
        "I need a function that estimates how long someone will wait in line, given how many "
        "people are ahead of them and how many counters are open.",
        "Can you write something that tells a customer roughly how long their wait is, from "
        "the queue length and the number of staff serving?",
    )
    facts = (
        Fact(
            "service_minutes",
            "rate",
            options=(2, 3, 4, 5, 8),
            default=3,
            keywords=("service", "each", "person", "serve", "long"),
            answer="Serving one person takes {v} minutes.",
        ),
        Fact(
            "method",
            "rounding",
            options=("ceil", "rounds", "nearest"),
            default="ceil",
            keywords=("round", "up", "nearest", "batch", "whole"),
            answer={
                "ceil": "Divide the total service time by the number of servers and "
                "round up to a whole minute.",
                "rounds": "Think in full rounds: (people ahead / servers, rounded up) "
                "rounds, each taking one service time.",
                "nearest": "Divide the total service time by the number of servers and "
                "round to the nearest minute (halves round up).",
            },
        ),
        Fact(
            "include_own",
            "rule",
            options=(False, True),
            default=False,
            keywords=("own", "finish", "themselves", "include", "complete"),
            answer=lambda v: (
                "Add their own service time: the wait is until they're done."
                if v
                else "The wait is until they reach the counter; their own service doesn't count."
            ),
        ),
        Fact(
            "no_servers",
            "edge_case",
            options=("minus_one", "as_one"),
            default="minus_one",
            keywords=("zero", "closed", "none", "negative", "nobody"),
            answer=lambda v: (
                "If there are no servers (0 or fewer), return the number -1."
                if v == "minus_one"
                else "If there are no servers (0 or fewer), treat it as one server."
            ),
        ),
        Fact(
            "return_format",
            "return_format",
            options=("minutes", "h_mm"),
            default="minutes",
            keywords=("return", "format", "string", "output", "hours"),
            answer=lambda v: (
                "Return whole minutes as an int."
                if v == "minutes"
                else 'Return an "H:MM" string like "1:05".'
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        s = v["service_minutes"]
        wait = {
            "ceil": f"math.ceil(people_ahead * {s} / servers)",
            "rounds": f"math.ceil(people_ahead / servers) * {s}",
            "nearest": f"math.floor(people_ahead * {s} / servers + 0.5)",
        }[v["method"]]
        own = f" + {s}" if v["include_own"] else ""
        guard = (
            ["if servers <= 0:", "    return -1"]
            if v["no_servers"] == "minus_one"
            else ["servers = max(servers, 1)"]
        )
        ret = "wait" if v["return_format"] == "minutes" else 'f"{wait // 60}:{wait % 60:02d}"'
        code = ["import math", *guard, f"wait = {wait}{own}", f"return {ret}"]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        out = [(rng.randint(1, 40), rng.randint(2, 5)) for _ in range(16)]
        return [
            *out,
            (0, 2),
            (5, 2),
            (7, 3),
            (3, 2),
            (11, 4),
            (1, 3),
            (25, 1),
            (45, 2),
            (40, 1),
            (10, 0),
            (4, -1),
            (13, 4),
            (9, 2),
            (0, 0),
        ]


class TimetableConflicts(Family):
    name = "timetable_conflicts"
    domain = "scheduling"
    function_names = (
        "count_conflicts",
        "timetable_conflicts",
        "clash_count",
        "find_clashes",
        "check_timetable",
    )
    params = ("classes",)
    descriptions = (
        "I need a function that checks a class timetable for clashes. Each class is a "
        "(start, end) pair of hours.",
        "Can you write something that looks at my list of class times, as start and end "
        "hours, and reports the conflicts?",
    )
    facts = (
        Fact(
            "touching",
            "boundary",
            options=(False, True),
            default=False,
            keywords=("touch", "adjacent", "exactly", "back", "right"),
            answer=lambda v: (
                "Classes exactly the required gap apart (e.g. one ends at 10 "
                "and the next starts at 10) " + ("do clash." if v else "don't clash.")
            ),
        ),
        Fact(
            "min_break",
            "threshold",
            options=(0, 0.25, 0.5, 0.75, 1),
            default=0,
            keywords=("break", "gap", "between", "walk", "travel"),
            answer=lambda v: (
                "No break is needed between classes."
                if v == 0
                else f"Classes need a break of at least {v} hours between them."
            ),
        ),
        Fact(
            "count_mode",
            "rule",
            options=("pairs", "classes"),
            default="pairs",
            keywords=("pair", "involved", "each", "twice", "unique"),
            answer=lambda v: (
                "Count each clashing pair of classes once."
                if v == "pairs"
                else "Count the classes involved in at least one clash, not the pairs."
            ),
        ),
        Fact(
            "zero_length",
            "edge_case",
            options=("check", "ignore"),
            default="check",
            keywords=("zero", "length", "empty", "same", "instant"),
            answer=lambda v: (
                "A zero-length class (start equals end) is checked like any other."
                if v == "check"
                else "A zero-length class (start equals end) never clashes."
            ),
        ),
        Fact(
            "return_format",
            "return_format",
            options=("count", "list", "both"),
            default="count",
            keywords=("return", "list", "index", "output", "format"),
            answer={
                "count": "Return just the number.",
                "list": "Return a sorted list of 0-based indexes: [i, j] pairs when counting "
                "pairs, or single class indexes when counting classes.",
                "both": 'Return a dict {"count": n, "conflicts": [...]}, where conflicts is '
                "the sorted list of 0-based [i, j] pairs (or single class indexes when "
                "counting classes).",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        le = "<=" if v["touching"] else "<"
        gap = f" + {v['min_break']}" if v["min_break"] else ""
        pairs = v["count_mode"] == "pairs"
        found = "found" if pairs else "sorted(found)"
        code = [
            "found = []" if pairs else "found = set()",
            "for i in range(len(classes)):",
            "    for j in range(i + 1, len(classes)):",
            "        (s1, e1), (s2, e2) = classes[i], classes[j]",
        ]
        if v["zero_length"] == "ignore":
            code += ["        if s1 == e1 or s2 == e2:", "            continue"]
        code += [
            f"        if s1 {le} e2{gap} and s2 {le} e1{gap}:",
            "            found.append([i, j])" if pairs else "            found.update((i, j))",
            {
                "count": "return len(found)",
                "list": f"return {found}",
                "both": f'return {{"count": len(found), "conflicts": {found}}}',
            }[v["return_format"]],
        ]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        def cls() -> list[float]:
            start = rng.choice([8, 8.5, 9, 9.5, 10, 11, 12, 13, 13.5, 14, 15, 16])
            return [start, start + rng.choice([0.5, 1, 1, 1.5, 2])]

        out = [([cls() for _ in range(rng.randint(2, 6))],) for _ in range(16)]
        for gap in (0, 0.25, 0.5, 1):
            out += [
                ([[9, 10], [10 + gap, 11 + gap]],),
                ([[13 + gap, 14 + gap], [11, 13], [16, 17]],),
                ([[9, 10], [10.25 + gap, 11.5 + gap], [8, 9]],),
            ]
        return [
            *out,
            ([],),
            ([[9, 11]],),
            ([[9, 11], [10, 10]],),
            ([[9, 11], [10, 12], [14, 15]],),
            ([[9, 11], [10, 12], [11.5, 13]],),
            ([[10, 10], [10, 10], [12, 13]],),
            ([[8, 12], [9, 10], [10.5, 11.5], [11, 13]],),
        ]


FAMILIES: tuple[Family, ...] = (
    ParkingFee(),
    MeetingOverlap(),
    ShiftPay(),
    QueueWait(),
    TimetableConflicts(),
)
