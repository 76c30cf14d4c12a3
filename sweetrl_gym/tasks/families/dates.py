"""Dates: ages, working days, renewals, seasons, durations and deadlines."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family

_HOLIDAYS = {
    (): "There are no holidays to skip.",
    ("01-01", "12-25"): "Also skip New Year's Day (Jan 1) and Christmas (Dec 25).",
    ("01-01", "07-04", "12-25"): "Also skip Jan 1, July 4 and Dec 25 as holidays.",
    ("12-25", "12-26"): "Also skip Christmas Day and Boxing Day (Dec 25 and 26).",
}
_FORMATS = {
    "iso": ("r.isoformat()", "Return the date as a 'YYYY-MM-DD' string."),
    "us": ('r.strftime("%m/%d/%Y")', "Return the date as 'MM/DD/YYYY', e.g. '03/07/2024'."),
    "eu": ('r.strftime("%d/%m/%Y")', "Return the date as 'DD/MM/YYYY', e.g. '07/03/2024'."),
    "long": ('f"{r:%B} {r.day}, {r.year}"', "Return the date like 'March 7, 2024'."),
    "weekday": ('r.strftime("%a %Y-%m-%d")', "Return the date like 'Thu 2024-03-07'."),
}


def _day(rng: random.Random, start: str = "2022-01-01", span: int = 1500) -> dt.date:
    return dt.date.fromisoformat(start) + dt.timedelta(days=rng.randrange(span))


class AgeOnDate(Family):
    name = "age_on_date"
    domain = "dates"
    function_names = ("age_on", "age_on_date", "compute_age")
    params = ("birth_date", "on_date")
    descriptions = (
        "I need a function that tells me how old someone is on a given date, from their birth "
        "date.",
        "Can you write something that works out a person's age on some day? Dates come in as "
        "'YYYY-MM-DD' strings.",
        "I'd like a python helper that computes age from a date of birth and another date.",
    )
    facts = (
        Fact(
            "on_birthday",
            "boundary",
            options=(True, False),
            default=True,
            keywords=("birthday", "exactly", "itself", "turn"),
            answer=lambda v: (
                "On the birthday itself the person already has the new age."
                if v
                else "On the birthday itself they still have the old age; it goes up the day after."
            ),
        ),
        Fact(
            "leap_day",
            "rule",
            options=("mar1", "feb28"),
            default="mar1",
            keywords=("leap", "february", "29", "feb"),
            answer={
                "mar1": "People born on Feb 29 have their birthday on March 1 in non-leap years.",
                "feb28": "People born on Feb 29 have their birthday on Feb 28 in non-leap years.",
            },
        ),
        Fact(
            "counting",
            "rule",
            options=("last", "next"),
            default="last",
            keywords=("completed", "next", "insurance", "count", "convention"),
            answer={
                "last": "Use completed years (age at the last birthday).",
                "next": "Use the insurance convention 'age next birthday': completed years "
                "plus one.",
            },
        ),
        Fact(
            "future",
            "edge_case",
            options=("zero", "minus_one", "invalid", "unborn"),
            default="zero",
            keywords=("before", "future", "unborn", "invalid", "earlier"),
            answer={
                "zero": "If the date is before the birth date, return 0.",
                "minus_one": "If the date is before the birth date, return -1.",
                "invalid": "If the date is before the birth date, return the string 'invalid'.",
                "unborn": "If the date is before the birth date, return the string 'not born yet'.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("int", "years", "years_old", "label"),
            default="int",
            keywords=("format", "string", "integer", "text", "output"),
            answer={
                "int": "Return the age as a plain integer.",
                "years": "Return a string like '34 years' ('1 year' for one).",
                "years_old": "Return a string like '34 years old' ('1 year old' for one).",
                "label": "Return a string like 'Age: 34'.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        moved = "dt.date(year, 3, 1)" if v["leap_day"] == "mar1" else "dt.date(year, 2, 28)"
        edge = {"zero": 0, "minus_one": -1, "invalid": "invalid", "unborn": "not born yet"}
        edge = repr(edge[v["future"]])
        before = "<" if v["on_birthday"] else "<="
        out = {
            "int": "years",
            "years": 'f"{years} year" + ("" if years == 1 else "s")',
            "years_old": 'f"{years} year" + ("" if years == 1 else "s") + " old"',
            "label": 'f"Age: {years}"',
        }
        return f"""
        import calendar
        import datetime as dt
        born = dt.date.fromisoformat(birth_date)
        on = dt.date.fromisoformat(on_date)
        if on < born:
            return {edge}
        year = on.year
        if (born.month, born.day) == (2, 29) and not calendar.isleap(year):
            birthday = {moved}
        else:
            birthday = born.replace(year=year)
        years = year - born.year - (1 if on {before} birthday else 0)
        years = max(years, 0){" + 1" if v["counting"] == "next" else ""}
        return {out[v["output"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = []
        for _ in range(14):
            born = _day(rng, "1950-01-01", 25000)
            cases.append((born, _day(rng, str(born), 20000)))
        for born in (_day(rng, "1960-01-01", 20000), dt.date(1988, 7, 14)):
            bday = born.replace(year=born.year + rng.randint(1, 50))
            cases += [(born, bday + dt.timedelta(days=k)) for k in (-1, 0, 1)]
        leap = dt.date(2000, 2, 29)
        cases += [(leap, dt.date(2023, 2, 28)), (leap, dt.date(2023, 3, 1))]
        cases += [(leap, dt.date(2024, 2, 29)), (leap, dt.date(2021, 3, 2))]
        cases += [(dt.date(2020, 5, 5), dt.date(2021, 5, 5)), (dt.date(2020, 5, 5),) * 2]
        cases += [(dt.date(2010, 1, 1), dt.date(2009, 12, 31))]
        return [(a.isoformat(), b.isoformat()) for a, b in cases]


class BusinessDays(Family):
    name = "business_days"
    domain = "dates"
    function_names = ("business_days", "count_workdays", "working_days_between")
    params = ("start", "end")
    descriptions = (
        "I need a function that counts the business days between two dates.",
        "Can you write something that tells me how many working days there are from one date to "
        "another? Dates are 'YYYY-MM-DD' strings.",
        "I'd like a python helper that counts workdays in a date range.",
    )
    facts = (
        Fact(
            "ends",
            "boundary",
            options=("both", "start_only", "end_only", "neither"),
            default="both",
            keywords=("inclusive", "include", "endpoints", "exclusive", "both"),
            answer={
                "both": "Count both the start date and the end date if they are workdays.",
                "start_only": "Count the start date but not the end date.",
                "end_only": "Count the end date but not the start date.",
                "neither": "Count only the days strictly between the two dates.",
            },
        ),
        Fact(
            "weekend",
            "rule",
            options=([5, 6], [4, 5], [6], [4]),
            default=[5, 6],
            keywords=("weekend", "saturday", "sunday", "friday", "off"),
            answer=lambda v: {
                (5, 6): "The weekend is Saturday and Sunday.",
                (4, 5): "Our weekend is Friday and Saturday; Sunday is a workday.",
                (6,): "Only Sunday is off; Saturday is a workday.",
                (4,): "Only Friday is off; every other day is a workday.",
            }[tuple(v)],
        ),
        Fact(
            "holidays",
            "rule",
            options=tuple(list(h) for h in _HOLIDAYS),
            default=[],
            keywords=("holiday", "christmas", "year", "july", "public"),
            answer=lambda v: _HOLIDAYS[tuple(v)],
        ),
        Fact(
            "reversed",
            "edge_case",
            options=("zero", "negative", "minus_one"),
            default="zero",
            keywords=("reversed", "backwards", "order", "negative", "after"),
            answer={
                "zero": "If the end date is before the start date, return 0.",
                "negative": "If the end date is before the start date, count the days between "
                "them the other way round and return the count as a negative number.",
                "minus_one": "If the end date is before the start date, return -1 to flag it.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        ends = v["ends"]
        first = "a" if ends in ("both", "start_only") else "a + one"
        last = "b" if ends in ("both", "end_only") else "b - one"
        flip = {
            "zero": "return 0",
            "negative": "a, b, sign = b, a, -1",
            "minus_one": "return -1",
        }[v["reversed"]]
        return f"""
        import datetime as dt
        a = dt.date.fromisoformat(start)
        b = dt.date.fromisoformat(end)
        one = dt.timedelta(days=1)
        sign = 1
        if b < a:
            {flip}
        off, holidays = {tuple(v["weekend"])!r}, {tuple(v["holidays"])!r}
        day, count = {first}, 0
        while day <= {last}:
            if day.weekday() not in off and day.strftime("%m-%d") not in holidays:
                count += 1
            day += one
        return sign * count
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = []
        for _ in range(16):
            a = _day(rng)
            cases.append((a, a + dt.timedelta(days=rng.randint(0, 60))))
        for _ in range(4):
            a = _day(rng)
            cases.append((a + dt.timedelta(days=rng.randint(1, 30)), a))
        cases += [(dt.date(2024, 6, 28), dt.date(2024, 7, 8)), (dt.date(2023, 12, 18),) * 2]
        cases += [(dt.date(2024, 12, 23), dt.date(2024, 12, 27)), (dt.date(2024, 3, 9),) * 2]
        cases += [(dt.date(2024, 12, 30), dt.date(2025, 1, 3)), (dt.date(2023, 12, 20),) * 2]
        cases += [(dt.date(2024, 3, 8), dt.date(2024, 3, 17)), (dt.date(2024, 3, 5),) * 2]
        cases += [(dt.date(2024, 3, 15), dt.date(2024, 3, 4)), (dt.date(2025, 1, 1),) * 2]
        return [(a.isoformat(), b.isoformat()) for a, b in cases]


class RenewalDate(Family):
    name = "renewal_date"
    domain = "dates"
    function_names = ("next_renewal", "renewal_date", "next_billing_date")
    params = ("start_date", "today")
    descriptions = (
        "I need a function that tells me when a customer's subscription renews next.",
        "Can you write something that gives the next billing date of a subscription from the "
        "sign-up date and today's date?",
        "I'd like a python helper for our subscription service that works out the upcoming "
        "renewal date.",
    )
    facts = (
        Fact(
            "months",
            "unit",
            options=(1, 3, 6, 12),
            default=1,
            keywords=("period", "often", "monthly", "yearly", "billing", "cycle"),
            answer=lambda v: "It renews every month." if v == 1 else f"It renews every {v} months.",
        ),
        Fact(
            "short_month",
            "rule",
            options=("clip", "chain", "overflow"),
            default="clip",
            keywords=("31st", "exist", "short", "end", "february"),
            answer={
                "clip": "If the sign-up day doesn't exist in a month, renew on that month's last "
                "day, and go back to the original day when it exists again.",
                "chain": "If the day doesn't exist in a month, renew on that month's last day "
                "and keep that new day from then on (Jan 31, Feb 28, Mar 28, ...).",
                "overflow": "If the day doesn't exist in a month, roll over into the next month "
                "by the missing days (Jan 31 + 1 month = Mar 3 in a non-leap year).",
            },
        ),
        Fact(
            "grace",
            "threshold",
            options=(0, 3, 7),
            default=0,
            keywords=("grace", "late", "passed", "overdue"),
            answer=lambda v: (
                "There's no grace period: once a renewal date has passed, give the next one."
                if v == 0
                else f"There's a {v}-day grace period: a renewal date is still the answer until "
                f"{v} days after it."
            ),
        ),
        Fact(
            "on_the_day",
            "boundary",
            options=(True, False),
            default=True,
            keywords=("today", "same", "exactly", "day"),
            answer=lambda v: (
                "If today is exactly a renewal day (or the last grace day), return that date."
                if v
                else "If today is exactly a renewal day (or the last grace day), already return "
                "the next renewal."
            ),
        ),
        Fact(
            "output",
            "return_format",
            options=("iso", "us", "eu", "long"),
            default="iso",
            keywords=("format", "string", "written", "look"),
            answer=lambda v: _FORMATS[v][1],
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        n, rule = v["months"], v["short_month"]
        spill = "0" if rule != "overflow" else "max(0, day - last)"
        step = f"add(r, r.day, {n})" if rule == "chain" else f"add(s, s.day, k * {n})"
        check = ">=" if v["on_the_day"] else ">"
        return f"""
        import calendar
        import datetime as dt
        def add(d, day, months):
            y, m = divmod(d.month - 1 + months, 12)
            last = calendar.monthrange(d.year + y, m + 1)[1]
            base = dt.date(d.year + y, m + 1, min(day, last))
            return base + dt.timedelta(days={spill})
        s = dt.date.fromisoformat(start_date)
        t = dt.date.fromisoformat(today)
        r, k = s, 1
        while True:
            r = {step}
            if r + dt.timedelta(days={v["grace"]}) {check} t:
                return {_FORMATS[v["output"]][0]}
            k += 1
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        n, g = v["months"], v["grace"]
        starts = [dt.date(2023, 1, 31), dt.date(2023, 8, 31), dt.date(2023, 11, 30)]
        starts += [dt.date(2024, 2, 29), dt.date(2023, 5, 29), dt.date(2024, 3, 31)]
        cases = [(s, _day(rng, str(s), 800)) for s in starts for _ in range(2)]
        cases += [(dt.date(2024, 2, 29), dt.date(2028, 2, 10))]
        for s, t in (("2023-01-31", "2023-04-28"), ("2023-11-30", "2024-02-27")):
            cases.append((dt.date.fromisoformat(s), dt.date.fromisoformat(t)))
        for s, t in (("2024-03-31", "2024-06-28"), ("2023-01-31", "2023-03-26")):
            cases.append((dt.date.fromisoformat(s), dt.date.fromisoformat(t)))
        for _ in range(8):
            s = _day(rng, "2022-01-01", 700).replace(day=rng.randint(1, 28))
            k = rng.randint(1, 5) * n
            due = s.replace(year=s.year + (s.month - 1 + k) // 12, month=(s.month - 1 + k) % 12 + 1)
            cases += [(s, due + dt.timedelta(days=g + d)) for d in (0, -1, 1, 2)]
        cases += [(dt.date(2024, 5, 10), dt.date(2024, 4, 1)), (dt.date(2024, 5, 10),) * 2]
        return [(a.isoformat(), b.isoformat()) for a, b in cases]


class SeasonOfDate(Family):
    name = "season_of_date"
    domain = "dates"
    function_names = ("season_of", "get_season", "season_for_date")
    params = ("month", "day")
    descriptions = (
        "I need a function that tells me which season a given day of the year falls in.",
        "Can you write something that takes a month and a day and returns the season?",
        "I'd like a python helper that names the season for a calendar date.",
    )
    facts = (
        Fact(
            "hemisphere",
            "rule",
            options=("north", "south"),
            default="north",
            keywords=("hemisphere", "northern", "southern", "australia", "north", "south"),
            answer={
                "north": "Use the northern hemisphere seasons.",
                "south": "Use the southern hemisphere seasons (summer starts around December).",
            },
        ),
        Fact(
            "system",
            "boundary",
            options=("meteorological", "astronomical", "irish"),
            default="meteorological",
            keywords=("start", "begin", "boundary", "equinox", "solstice", "meteorological"),
            answer={
                "meteorological": "Seasons start on the 1st of March, June, September and "
                "December.",
                "astronomical": "Seasons start on Mar 20, Jun 21, Sep 22 and Dec 21.",
                "irish": "Seasons start on the 1st of February, May, August and November.",
            },
        ),
        Fact(
            "autumn",
            "rule",
            options=("autumn", "fall"),
            default="autumn",
            keywords=("autumn", "fall", "name", "call"),
            answer="Call the season after summer '{v}'.",
        ),
        Fact(
            "case",
            "case",
            options=("lower", "title", "upper"),
            default="lower",
            keywords=("capital", "uppercase", "lowercase", "capitalize", "case"),
            answer={
                "lower": "Return the name in lowercase, like 'winter'.",
                "title": "Return the name capitalised, like 'Winter'.",
                "upper": "Return the name in uppercase, like 'WINTER'.",
            },
        ),
        Fact(
            "invalid",
            "edge_case",
            options=("invalid", "", "unknown", "n/a"),
            default="invalid",
            keywords=("invalid", "impossible", "wrong", "bad", "13"),
            answer=lambda v: (
                f"For an impossible month or day, return the string '{v}'."
                if v
                else "For an impossible month or day, return an empty string."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        starts = {"meteorological": (3, 6, 9, 12), "astronomical": (3, 6, 9, 12)}
        starts["irish"] = (2, 5, 8, 11)
        days = (20, 21, 22, 21) if v["system"] == "astronomical" else (1, 1, 1, 1)
        names = ["spring", "summer", v["autumn"], "winter"]
        if v["hemisphere"] == "south":
            names = names[2:] + names[:2]
        names = [getattr(x, v["case"])() for x in names]
        table = tuple(zip(starts[v["system"]], days, names))
        return f"""
        import calendar
        if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(2024, month)[1]:
            return {v["invalid"]!r}
        season = {names[3]!r}
        for m, d, name in {table!r}:
            if (month, day) >= (m, d):
                season = name
        return season
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = [(m, d) for m in (2, 3, 5, 6, 8, 9, 11, 12) for d in (1, 20, 21, 22)]
        cases += [(m, rng.randint(1, 28)) for m in range(1, 13)]
        cases += [(rng.randint(1, 12), rng.randint(1, 31)) for _ in range(6)]
        return [*cases, (13, 5), (0, 10), (2, 30), (4, 31), (2, 29), (6, 0)]


class FormatDuration(Family):
    name = "format_duration"
    domain = "dates"
    function_names = ("format_duration", "humanize_seconds", "duration_text")
    params = ("seconds",)
    descriptions = (
        "I need a function that turns a number of seconds into a human-readable duration.",
        "Can you write something that takes a length of time in seconds and gives me a nice "
        "string to show users?",
        "I'd like a python helper that formats elapsed seconds as readable text.",
    )
    facts = (
        Fact(
            "units",
            "unit",
            options=("hms", "dhms", "hm", "ms"),
            default="hms",
            keywords=("days", "hours", "largest", "smallest", "biggest"),
            answer={
                "hms": "Show hours, minutes and seconds (no days, hours can go past 24).",
                "dhms": "Show days, hours, minutes and seconds.",
                "hm": "Show only hours and minutes, no seconds.",
                "ms": "Show only minutes and seconds (minutes can go past 60).",
            },
        ),
        Fact(
            "style",
            "return_format",
            options=("long", "long_and", "short", "compact"),
            default="long",
            keywords=("style", "abbreviate", "separator", "comma", "short", "spell"),
            answer={
                "long": "Write it like '1 hour, 5 minutes, 30 seconds' (singular for 1).",
                "long_and": "Write it like '1 hour, 5 minutes and 30 seconds' (singular for "
                "1, 'and' before the last part).",
                "short": "Write it like '1h 5m 30s'.",
                "compact": "Write it like '1h5m30s' with no spaces.",
            },
        ),
        Fact(
            "zeros",
            "edge_case",
            options=("skip", "show"),
            default="skip",
            keywords=("skip", "omit", "parts", "hide", "component"),
            answer={
                "skip": "Leave out parts that are zero, like '2 hours, 5 seconds'.",
                "show": "Always show every unit, even when it is zero.",
            },
        ),
        Fact(
            "rounding",
            "rounding",
            options=("down", "nearest", "up"),
            default="down",
            keywords=("round", "fraction", "truncate", "nearest", "leftover"),
            answer={
                "down": "Drop any leftover below the smallest unit shown.",
                "nearest": "Round to the nearest smallest unit shown (half up).",
                "up": "Round any leftover up to a full smallest unit shown.",
            },
        ),
        Fact(
            "nothing",
            "edge_case",
            options=("zero_unit", "empty", "now"),
            default="zero_unit",
            keywords=("zero", "nothing", "negative", "instant", "total"),
            answer={
                "zero_unit": "If it comes out as nothing (zero or negative), show zero of the "
                "smallest unit shown, in the same style (e.g. '0 seconds' or '0m').",
                "empty": "If it comes out as nothing (zero or negative), return an empty string.",
                "now": "If it comes out as nothing (zero or negative), return 'just now'.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        every = (("day", "d", 86400), ("hour", "h", 3600), ("minute", "m", 60), ("second", "s", 1))
        units = tuple(u for u in every if u[1] in v["units"])
        style, step = v["style"], units[-1][2]
        if style.startswith("long"):
            part = 'f"{q} {name}" + ("" if q == 1 else "s")'
            zero = f"0 {units[-1][0]}s"
        else:
            part = 'f"{q}{abbr}"'
            zero = f"0{units[-1][1]}"
        zero = {"zero_unit": zero, "empty": "", "now": "just now"}[v["nothing"]]
        joined = {
            "long": '", ".join(parts)',
            "long_and": '", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 '
            "else parts[0]",
            "short": '" ".join(parts)',
            "compact": '"".join(parts)',
        }[style]
        fn = "math.ceil" if v["rounding"] == "up" else "math.floor"
        half = " + 0.5" if v["rounding"] == "nearest" else ""
        keep = "" if v["zeros"] == "show" else "if q:\n                "
        return f"""
        import math
        n = {fn}(seconds / {step}{half})
        if n <= 0:
            return {zero!r}
        left, parts = n * {step}, []
        for name, abbr, size in {units!r}:
            q, left = divmod(left, size)
            {keep}parts.append({part})
        return {joined}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = [rng.randint(1, 200000) for _ in range(10)]
        cases += [round(rng.uniform(1, 100000), 1) for _ in range(6)]
        cases += [0, -5, 0.4, 29.6, 45, 59.5, 60, 61, 89.7, 3600, 3601, 3659.5, 7265]
        return [(x,) for x in [*cases, 86400, 90061, 93784.8, 172800, 1]]


class DueDate(Family):
    name = "due_date"
    domain = "dates"
    function_names = ("due_date", "deadline_for", "finish_date")
    params = ("start_date", "workload_days")
    descriptions = (
        "I need a function that works out when a task will be due, given the day it starts and "
        "how many days of work it takes.",
        "Can you write something that gives me the deadline for a job from its start date and the "
        "number of work days it needs?",
        "I'd like a python helper that computes a task's due date.",
    )
    facts = (
        Fact(
            "days_off",
            "rule",
            options=([5, 6], [], [6]),
            default=[5, 6],
            keywords=("weekend", "saturday", "sunday", "skip", "weekday"),
            answer=lambda v: {
                (5, 6): "Work only happens Monday to Friday; skip weekends.",
                (): "Every calendar day counts, weekends included.",
                (6,): "Work happens Monday to Saturday; only Sunday is off.",
            }[tuple(v)],
        ),
        Fact(
            "start_counts",
            "boundary",
            options=(False, True),
            default=False,
            keywords=("start", "first", "same", "begin", "itself"),
            answer=lambda v: (
                "The start day itself counts as the first work day (if it's a work day)."
                if v
                else "Work begins the day after the start date; the start date doesn't count."
            ),
        ),
        Fact(
            "holidays",
            "rule",
            options=tuple(list(h) for h in _HOLIDAYS),
            default=[],
            keywords=("holiday", "christmas", "year", "july", "public"),
            answer=lambda v: _HOLIDAYS[tuple(v)],
        ),
        Fact(
            "no_work",
            "edge_case",
            options=("start", "invalid", "empty"),
            default="start",
            keywords=("zero", "negative", "nothing", "invalid", "empty"),
            answer={
                "start": "If the workload is zero or negative, the due date is the start date.",
                "invalid": "If the workload is zero or negative, return the string 'invalid'.",
                "empty": "If the workload is zero or negative, return an empty string.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("iso", "us", "weekday", "long"),
            default="iso",
            keywords=("format", "string", "written", "look"),
            answer=lambda v: _FORMATS[v][1],
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        fmt = _FORMATS[v["output"]][0]
        edge = {"start": fmt, "invalid": "'invalid'", "empty": "''"}[v["no_work"]]
        first = "r" if v["start_counts"] else "r + dt.timedelta(days=1)"
        return f"""
        import datetime as dt
        r = dt.date.fromisoformat(start_date)
        if workload_days <= 0:
            return {edge}
        off, holidays = {tuple(v["days_off"])!r}, {tuple(v["holidays"])!r}
        day, left = {first}, workload_days
        while True:
            if day.weekday() not in off and day.strftime("%m-%d") not in holidays:
                left -= 1
                if left == 0:
                    r = day
                    return {fmt}
            day += dt.timedelta(days=1)
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = [(_day(rng), rng.randint(1, 25)) for _ in range(16)]
        cases += [(dt.date(2024, 6, 28), 8), (dt.date(2023, 12, 21), 8), (dt.date(2025, 6, 30), 6)]
        cases += [(dt.date(2024, 3, 9), 1), (dt.date(2024, 3, 4), 1), (dt.date(2024, 3, 8), 3)]
        cases += [(dt.date(2024, 3, 10), 2), (dt.date(2024, 12, 30), 2), (dt.date(2024, 5, 1), 0)]
        cases += [(dt.date(2024, 12, 23), 3), (dt.date(2025, 12, 22), 4)]
        return [(d.isoformat(), n) for d, n in [*cases, (dt.date(2024, 5, 6), -3)]]


FAMILIES: tuple[Family, ...] = (
    AgeOnDate(),
    BusinessDays(),
    RenewalDate(),
    SeasonOfDate(),
    FormatDuration(),
    DueDate(),
)
