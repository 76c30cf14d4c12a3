"""Everyday: bills, fares, running, cooking, contact lists and polls."""

from __future__ import annotations

import random
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family

_MILE_KM = 1.609344


def _money(v: Any) -> str:
    return f"${v:.2f}"


def _fragile(x: float, *digits: int, whole: bool = False) -> bool:
    """Whether rounding ``x`` to ``digits`` places (or floor/ceil) hangs on float noise."""
    frac = [abs(x) * 10**d % 1 for d in digits]
    if whole:
        frac.append((abs(x) % 1 + 0.5) % 1)
    return any(abs(f - 0.5) < 1e-6 for f in frac)


class ElectricityBill(Family):
    name = "electricity_bill"
    domain = "everyday"
    function_names = ("electricity_bill", "compute_power_bill", "energy_charge")
    params = ("kwh",)
    descriptions = (
        "I need a function that works out my monthly electricity bill from the kWh I used.",
        "Can you write something that turns a month's electricity usage into the amount owed? "
        "The price goes up in tiers.",
        "I'd like a python function for a tiered electricity tariff: usage in, bill out.",
    )
    facts = (
        Fact(
            "tier_limit",
            "threshold",
            options=(100, 200, 300, 500),
            default=100,
            keywords=("tier", "first", "size", "cheaper", "band"),
            answer="The first (cheaper) tier covers the first {v} kWh.",
        ),
        Fact(
            "rates",
            "rate",
            options=([0.12, 0.18], [0.1, 0.15], [0.15, 0.22], [0.2, 0.3]),
            default=[0.12, 0.18],
            keywords=("price", "per", "tariff", "expensive", "unit"),
            answer=lambda v: (
                f"The first tier costs ${v[0]:.2f} per kWh and usage above it costs "
                f"${v[1]:.2f} per kWh."
            ),
        ),
        Fact(
            "fixed_charge",
            "rate",
            options=(0.0, 5.0, 9.95, 12.5),
            default=0.0,
            keywords=("fixed", "monthly", "service", "standing", "connection"),
            answer=lambda v: (
                "There is no fixed monthly charge."
                if v == 0
                else f"A fixed service charge of {_money(v)} is added every month."
            ),
        ),
        Fact(
            "progressive",
            "rule",
            options=(True, False),
            default=True,
            keywords=("progressive", "marginal", "entire", "apply", "bracket", "all"),
            answer=lambda v: (
                "Only the kWh above the first tier pay the higher price."
                if v
                else "Once usage goes over the first tier, ALL kWh are billed at the higher "
                "price (usage exactly at the tier limit still gets the low price)."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=(2, 0, None),
            default=2,
            keywords=("round", "cents", "decimal", "dollar"),
            answer={
                2: "Round the bill to cents.",
                0: "Round the bill to whole dollars (round(bill, 0)).",
                None: "Don't round the bill at all.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        limit, (low, high) = v["tier_limit"], v["rates"]
        above = (
            f"{limit} * {low} + (kwh - {limit}) * {high}" if v["progressive"] else f"kwh * {high}"
        )
        bill = "energy" if not v["fixed_charge"] else f"{v['fixed_charge']} + energy"
        if v["rounding"] is not None:
            bill = f"round({bill}, {v['rounding']})"
        return f"""
        if kwh <= {limit}:
            energy = kwh * {low}
        else:
            energy = {above}
        return {bill}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = [0, 37.3, v["tier_limit"], v["tier_limit"] + 1, v["tier_limit"] - 0.5]
        for limit in (100, 200, 300, 500):
            cases += [limit - 1, limit + 0.7, limit + 23]
        cases += [round(rng.uniform(1, 900), 2) for _ in range(12)] + [850, 1234.57]
        limit, (low, high) = v["tier_limit"], v["rates"]

        def raw(kwh: float) -> float:
            if kwh <= limit:
                return kwh * low
            return limit * low + (kwh - limit) * high if v["progressive"] else kwh * high

        return [(c,) for c in cases if not _fragile(v["fixed_charge"] + raw(c), 0, 2)]


class TaxiFare(Family):
    name = "taxi_fare"
    domain = "everyday"
    function_names = ("taxi_fare", "calculate_fare", "cab_price")
    params = ("distance_km", "hour")
    descriptions = (
        "Write me a function that calculates a taxi fare from the trip distance and the hour "
        "the ride starts.",
        "I run a small cab company and need a python function that prices a ride; rides at "
        "night cost more.",
        "Can you make a fare calculator for my taxi? It gets the kilometres driven and the "
        "pickup hour (0-23).",
    )
    facts = (
        Fact(
            "rates",
            "rate",
            options=([3.0, 1.75], [2.5, 2.0], [3.5, 1.5], [4.0, 2.25]),
            default=[3.0, 1.75],
            keywords=("base", "per", "km", "kilometre", "flag", "start"),
            answer=lambda v: f"The base fare is ${v[0]:.2f} plus ${v[1]:.2f} per km.",
        ),
        Fact(
            "night_hours",
            "boundary",
            options=([22, 6], [20, 6], [23, 5], [0, 6]),
            default=[22, 6],
            keywords=("night", "hours", "evening", "late", "window", "midnight"),
            answer=lambda v: (
                f"Night time runs from {v[0]:02d}:00 until {v[1]:02d}:00: hour {v[0]} counts "
                f"as night, hour {v[1]} does not."
            ),
        ),
        Fact(
            "surcharge_pct",
            "rate",
            options=(25, 20, 50),
            default=25,
            keywords=("surcharge", "extra", "higher", "percent", "premium"),
            answer="Night rides cost {v}% more (applied to the whole fare).",
        ),
        Fact(
            "minimum",
            "threshold",
            options=(None, 5.0, 8.0, 10.0),
            default=None,
            keywords=("minimum", "least", "short", "floor", "lowest"),
            answer=lambda v: (
                "There is no minimum fare."
                if v is None
                else f"The minimum fare is {_money(v)}, checked after any night surcharge."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "dollar", "up_dollar", "up_half"),
            default="cents",
            keywords=("round", "cents", "decimal", "dollar", "nearest"),
            answer={
                "cents": "Round the fare to cents.",
                "dollar": "Round the fare to the nearest whole dollar (an int, using round()).",
                "up_dollar": "Round the fare (after rounding to cents) UP to the next whole "
                "dollar, as an int.",
                "up_half": "Round the fare (after rounding to cents) UP to the next $0.50.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        (base, per_km), (start, end) = v["rates"], v["night_hours"]
        night = f"hour >= {start} or hour < {end}" if start > end else f"{start} <= hour < {end}"
        factor = 1 + v["surcharge_pct"] / 100
        floor = "" if v["minimum"] is None else f"\nfare = max(fare, {v['minimum']})"
        result = {
            "cents": "round(fare, 2)",
            "dollar": "round(fare)",
            "up_dollar": "math.ceil(round(fare, 2))",
            "up_half": "math.ceil(round(fare, 2) * 2) / 2",
        }[v["rounding"]]
        head = "import math\n" if "math" in result else ""
        return (
            head
            + f"fare = {base} + {per_km} * distance_km\nif {night}:\n"
            + (f"    fare = fare * {factor}{floor}\nreturn {result}\n")
        )

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        dists = [0.0, 0.4, 1.0, 1.3, 2.35, 3.8, 5.0, 7.15, 12.6, 25.0, 41.3]
        cases = [(rng.choice(dists), h) for h in range(24)]
        for start, end in ([22, 6], [20, 6], [23, 5], [0, 6]):
            for hour in (start, (start - 1) % 24, end, end - 1) * 2:
                cases.append((round(rng.uniform(0.5, 30), 2), hour))
        cases += [(0.5, 12), (0.5, 23), (1.1, 3), (2.2, 14), (1.7, 2), (0.0, 15)]
        cases += [(round(rng.uniform(0.1, 1.5), 2), rng.randrange(24)) for _ in range(6)]
        (base, per_km), (start, end) = v["rates"], v["night_hours"]

        def raw(km: float, hour: int) -> float:
            night = (hour >= start or hour < end) if start > end else start <= hour < end
            fare = (base + per_km * km) * (1 + v["surcharge_pct"] / 100 if night else 1)
            return fare if v["minimum"] is None else max(fare, v["minimum"])

        digits = 0 if v["rounding"] == "dollar" else 2
        return [c for c in cases if not _fragile(raw(*c), digits)]


class RunningPace(Family):
    name = "running_pace"
    domain = "everyday"
    function_names = ("running_pace", "compute_pace", "pace_from_run")
    params = ("distance", "duration")
    descriptions = (
        "I want a function that tells me my running pace from how far I ran and how long it took.",
        "Can you write a pace calculator for my runs? It gets the distance and the time.",
        "I'd like a python helper that turns a run's distance and time into a pace.",
    )
    facts = (
        Fact(
            "distance_unit",
            "unit",
            options=("km", "miles", "meters"),
            default="km",
            keywords=("distance", "far", "kilometers", "miles", "ran"),
            answer="The distance I pass in is in {v}.",
        ),
        Fact(
            "time_unit",
            "unit",
            options=("minutes", "seconds"),
            default="minutes",
            keywords=("time", "duration", "long", "took", "elapsed"),
            answer=lambda v: (
                "The time I pass in is in minutes (it can have decimals, like 27.5)."
                if v == "minutes"
                else "The time I pass in is the total number of seconds."
            ),
        ),
        Fact(
            "pace_per",
            "unit",
            options=("km", "mile"),
            default="km",
            keywords=("pace", "per", "split", "expressed"),
            answer="I want the pace per {v}.",
        ),
        Fact(
            "seconds_rounding",
            "rounding",
            options=("round", "floor", "ceil"),
            default="round",
            keywords=("round", "truncate", "floor", "ceiling", "fraction", "whole"),
            answer={
                "round": "Round the pace to the nearest whole second (Python's round()).",
                "floor": "Drop the fractional seconds of the pace (truncate down).",
                "ceil": "Round the pace up to the next whole second.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("m:ss", "m:ss/unit", "seconds", "minutes"),
            default="m:ss",
            keywords=("format", "string", "colon", "display", "show"),
            answer={
                "m:ss": "Return a string like '5:07' (minutes, colon, two-digit seconds).",
                "m:ss/unit": "Return a string like '5:07 /km' (or '8:14 /mi' for miles).",
                "seconds": "Return the pace as an int number of seconds, like 307.",
                "minutes": "Return the pace in minutes as a float rounded to 2 decimals "
                "(whole seconds / 60), like 5.12.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        units = {
            ("km", "km"): "distance",
            ("km", "mile"): f"(distance / {_MILE_KM})",
            ("miles", "km"): f"(distance * {_MILE_KM})",
            ("miles", "mile"): "distance",
            ("meters", "km"): "(distance / 1000)",
            ("meters", "mile"): "(distance / 1609.344)",
        }[v["distance_unit"], v["pace_per"]]
        seconds = "duration * 60" if v["time_unit"] == "minutes" else "duration"
        rounding = {"round": "round", "floor": "math.floor", "ceil": "math.ceil"}[
            v["seconds_rounding"]
        ]
        suffix = " /km" if v["pace_per"] == "km" else " /mi"
        result = {
            "m:ss": 'f"{secs // 60}:{secs % 60:02d}"',
            "m:ss/unit": f'f"{{secs // 60}}:{{secs % 60:02d}}{suffix}"',
            "seconds": "secs",
            "minutes": "round(secs / 60, 2)",
        }[v["output"]]
        head = "import math\n" if "math." in rounding else ""
        return head + (
            f"pace = {seconds} / {units}\nsecs = int({rounding}(pace))\nreturn {result}\n"
        )

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = []
        for _ in range(26):
            km = rng.choice([3, 5, 8, 10, 12.5, 15, 21.1, 42.2]) + rng.choice([0, 0.3, 0.7])
            secs = km * rng.uniform(230, 420)
            dist = {"km": km, "miles": round(km / _MILE_KM, 2), "meters": round(km * 1000)}[
                v["distance_unit"]
            ]
            dur = round(secs / 60, 1) if v["time_unit"] == "minutes" else int(secs)
            cases.append((dist, dur))
        cases += [(5, 25.2 if v["time_unit"] == "minutes" else 1512), (10, 55.4), (3, 1000)]
        to_km = {"km": 1, "miles": _MILE_KM, "meters": 0.001}[v["distance_unit"]]
        per = 1 if v["pace_per"] == "km" else _MILE_KM
        scale = (60 if v["time_unit"] == "minutes" else 1) * per / to_km
        return [(d, t) for d, t in cases if not _fragile(t * scale / d, 0, whole=True)]


class ScaleRecipe(Family):
    name = "scale_recipe"
    domain = "everyday"
    function_names = ("scale_recipe", "adjust_recipe", "recipe_for_servings")
    params = ("ingredients", "servings")
    descriptions = (
        "I need a function that scales my recipe's ingredient amounts to a different number "
        "of servings.",
        "Can you write something that takes a recipe (ingredient to amount) and how many "
        "people I'm cooking for, and adjusts the amounts?",
        "I'd like a python function to resize recipes for more or fewer servings.",
    )
    facts = (
        Fact(
            "base_servings",
            "rule",
            options=(4, 1, 2, 6),
            default=4,
            keywords=("base", "original", "serves", "makes", "written"),
            answer=lambda v: (
                "My recipes are written for 1 serving."
                if v == 1
                else f"My recipes are written for {v} servings."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=(None, 2, 1, 0),
            default=None,
            keywords=("round", "decimal", "places", "precise"),
            answer={
                None: "Don't round the amounts.",
                2: "Round each amount to 2 decimals.",
                1: "Round each amount to 1 decimal.",
                0: "Round each amount to a whole number (round(x, 0)).",
            },
        ),
        Fact(
            "min_amount",
            "threshold",
            options=(0, 0.25, 0.5, 1),
            default=0,
            keywords=("minimum", "small", "tiny", "least", "bump"),
            answer=lambda v: (
                "There is no minimum amount; tiny amounts stay tiny."
                if v == 0
                else f"No amount may go below {v}: anything smaller (after rounding) becomes {v}."
            ),
        ),
        Fact(
            "bad_servings",
            "edge_case",
            options=("scale", "empty", "original"),
            default="scale",
            keywords=("zero", "negative", "invalid", "nonpositive"),
            answer={
                "scale": "Zero or negative servings get no special treatment: just scale.",
                "empty": "If servings is zero or negative, return an empty result.",
                "original": "If servings is zero or negative, return the recipe unchanged.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("dict", "pairs"),
            default="dict",
            keywords=("return", "format", "dictionary", "pairs", "tuples"),
            answer=lambda v: (
                "Return a dict of ingredient -> amount."
                if v == "dict"
                else "Return a list of (ingredient, amount) tuples in the recipe's order."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        pairs = v["output"] == "pairs"
        guard = {
            "scale": "",
            "empty": f"if servings <= 0:\n    return {'[]' if pairs else '{}'}\n",
            "original": "if servings <= 0:\n    return "
            + ("list(ingredients.items())" if pairs else "dict(ingredients)")
            + "\n",
        }[v["bad_servings"]]
        value = "amount * factor"
        if v["rounding"] is not None:
            value = f"round({value}, {v['rounding']})"
        if v["min_amount"]:
            value = f"max({value}, {v['min_amount']})"
        result = "list(scaled.items())" if pairs else "scaled"
        return guard + (
            f"factor = servings / {v['base_servings']}\nscaled = {{}}\n"
            f"for name, amount in ingredients.items():\n    scaled[name] = {value}\n"
            f"return {result}\n"
        )

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        pantry = {
            "flour": [250, 300, 500],
            "sugar": [100, 150, 75],
            "eggs": [2, 3, 4],
            "milk": [0.5, 1.25, 2],
            "salt": [0.125, 0.25, 0.1],
            "butter": [40, 113, 60],
            "vanilla": [0.5, 1, 0.3],
            "oil": [0.333, 0.667, 1.5],
        }
        cases = []
        for _ in range(24):
            names = rng.sample(sorted(pantry), rng.randint(2, 5))
            recipe = {n: rng.choice(pantry[n]) for n in names}
            cases.append((recipe, rng.choice([1, 2, 3, 5, 6, 7, 9, 10])))
        base = v["base_servings"]
        small = {"salt": 0.1, "pepper": 0.3, "oil": 0.7, "rice": 1.3}
        cases += [
            (small, 1),
            (small, 3),
            ({"flour": 200, "yeast": 0.25}, 0),
            ({"flour": 200, "milk": 1.5}, -2),
            ({"sugar": 0.33, "eggs": 3}, 2),
            ({"honey": 2.375, "flour": 180}, 3),
            ({"oil": 0.333, "flour": 180}, 2),
            ({"oil": 0.667, "sugar": 90}, 2),
        ]
        digits = () if v["rounding"] is None else (v["rounding"],)
        return [
            (r, n) for r, n in cases if not any(_fragile(a * n / base, *digits) for a in r.values())
        ]


class DedupeEmails(Family):
    name = "dedupe_emails"
    domain = "everyday"
    function_names = ("dedupe_emails", "unique_emails", "remove_duplicate_emails")
    params = ("emails",)
    descriptions = (
        "I need a function that removes duplicate email addresses from my mailing list.",
        "Can you write something that cleans up a list of emails so every address appears "
        "only once?",
        "I'd like a python function to deduplicate the email addresses people signed up with.",
    )
    facts = (
        Fact(
            "case",
            "case",
            options=("insensitive", "sensitive", "domain_only"),
            default="insensitive",
            keywords=("case", "uppercase", "lowercase", "capital", "sensitive"),
            answer={
                "insensitive": "Compare case-insensitively: Bob@Mail.com and bob@mail.com are "
                "the same (keep the spelling of the kept entry).",
                "sensitive": "Compare exactly: Bob@Mail.com and bob@mail.com are different.",
                "domain_only": "Only the domain ignores case: Bob@MAIL.com equals Bob@mail.com, "
                "but bob@mail.com is a different address.",
            },
        ),
        Fact(
            "whitespace",
            "rule",
            options=("ends", "none", "all"),
            default="ends",
            keywords=("whitespace", "spaces", "strip", "trim", "blank"),
            answer={
                "ends": "Strip spaces around each address before comparing, and return them "
                "stripped.",
                "none": "Don't strip anything: ' a@b.com' and 'a@b.com' are different entries.",
                "all": "Remove every space, even inside ('bob @mail.com' becomes "
                "'bob@mail.com'), before comparing and in the result.",
            },
        ),
        Fact(
            "keep",
            "tie_break",
            options=("first", "last"),
            default="first",
            keywords=("keep", "occurrence", "first", "last", "latest", "earliest"),
            answer=lambda v: (
                "For repeats keep the first occurrence (its position and spelling)."
                if v == "first"
                else "For repeats keep the last occurrence: it goes where it last appears, with "
                "that spelling."
            ),
        ),
        Fact(
            "order",
            "ordering",
            options=("input", "alphabetical", "domain"),
            default="input",
            keywords=("sort", "order", "alphabetical", "arrange"),
            answer={
                "input": "Keep the list order; don't sort.",
                "alphabetical": "Sort the result alphabetically ignoring case (stable sort).",
                "domain": "Sort the result by domain, then by the whole address, ignoring case "
                "(stable sort).",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("list", "comma", "semicolon", "lines"),
            default="list",
            keywords=("return", "format", "joined", "string", "paste"),
            answer={
                "list": "Return a list of strings.",
                "comma": "Return one string with the addresses joined by ', '.",
                "semicolon": "Return one string with the addresses joined by '; '.",
                "lines": "Return one string with one address per line (joined by '\\n').",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        key = {
            "insensitive": "email.lower()",
            "sensitive": "email",
            "domain_only": "email.rpartition('@')[0] + '@' + email.rpartition('@')[2].lower()",
        }[v["case"]]
        store = (
            "kept.pop(key, None)\n    kept[key] = email"
            if v["keep"] == "last"
            else "if key not in kept:\n        kept[key] = email"
        )
        sort = {
            "input": "",
            "alphabetical": "result.sort(key=str.lower)\n",
            "domain": "result.sort(key=lambda e: (e.rpartition('@')[2].lower(), e.lower()))\n",
        }[v["order"]]
        result = {
            "list": "result",
            "comma": "', '.join(result)",
            "semicolon": "'; '.join(result)",
            "lines": "'\\n'.join(result)",
        }[v["output"]]
        return (
            "kept = {}\nfor email in emails:\n"
            + {
                "ends": "    email = email.strip()\n",
                "none": "",
                "all": "    email = ''.join(email.split())\n",
            }[v["whitespace"]]
            + f"    key = {key}\n    {store}\nresult = list(kept.values())\n{sort}"
            + f"return {result}\n"
        )

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        base = ["alice@example.com", "Bob@Mail.com", "carol@site.org", "dave@example.com",
                "zed@abc.net", "amy@zoo.io"]  # fmt: skip
        variants = [
            lambda e: e,
            lambda e: e.lower(),
            lambda e: e.upper(),
            lambda e: e.rpartition("@")[0] + "@" + e.rpartition("@")[2].upper(),
            lambda e: " " + e,
            lambda e: e + "  ",
            lambda e: e.replace("@", " @"),
        ]
        cases = []
        for _ in range(22):
            picks = [rng.choice(base[: rng.randint(2, 6)]) for _ in range(rng.randint(3, 8))]
            cases.append([rng.choice(variants)(e) for e in picks])
        cases += [
            [],
            ["a@x.com", "A@x.com", "a@x.com"],
            [" bob@y.com", "bob@y.com ", "Bob@Y.com", "bob@y.com"],
            ["zed@a.com", "amy@b.com", "Zed@A.com", "amy@b.com"],
            ["Al@Host.com", "al@host.com", "Al@HOST.com", "tim@host.com"],
            ["ann @web.de", "ann@web.de", " ann@web.de", "Ann@web.de"],
        ]
        return [(c,) for c in cases]


class TopVoted(Family):
    name = "top_voted"
    domain = "everyday"
    function_names = ("top_voted", "top_k_items", "most_votes")
    params = ("votes", "k")
    descriptions = (
        "I need a function that gives me the top items from a poll, given each item's votes.",
        "Can you write something that picks the k most popular options from a dict of vote counts?",
        "I'd like a python function to find the winners of our team lunch vote.",
    )
    facts = (
        Fact(
            "tie_break",
            "tie_break",
            options=("insertion", "alphabetical"),
            default="insertion",
            keywords=("alphabetical", "alphabetically", "break", "insertion", "same"),
            answer=lambda v: (
                "Items with equal votes keep the order they have in the dict."
                if v == "insertion"
                else "Items with equal votes go in alphabetical order, ignoring case."
            ),
        ),
        Fact(
            "include_ties",
            "boundary",
            options=(False, True),
            default=False,
            keywords=("beyond", "extra", "past", "exceed", "cut"),
            answer=lambda v: (
                "Return at most k items, even if others tie with the k-th."
                if not v
                else "Also include every item tied with the k-th one, even if that gives more "
                "than k."
            ),
        ),
        Fact(
            "min_votes",
            "threshold",
            options=(0, 1, 2, 3, 5),
            default=0,
            keywords=("minimum", "fewer", "exclude", "eligible", "qualify"),
            answer=lambda v: (
                "Any item can be listed, even with 0 votes."
                if v == 0
                else f"Items with fewer than {v} votes are never listed."
            ),
        ),
        Fact(
            "merge_case",
            "case",
            options=(False, True),
            default=False,
            keywords=("case", "capital", "lowercase", "merge", "combine"),
            answer=lambda v: (
                "Names are case-sensitive: 'Pizza' and 'pizza' are separate items."
                if not v
                else "Names differing only in case are one item: add up their votes and show "
                "the name in lowercase."
            ),
        ),
        Fact(
            "output",
            "return_format",
            options=("names", "pairs", "strings", "ranked"),
            default="names",
            keywords=("return", "format", "tuples", "pairs", "names"),
            answer={
                "names": "Return a list of the item names, most votes first.",
                "pairs": "Return a list of (name, votes) tuples, most votes first.",
                "strings": "Return a list of strings like 'Pizza (12)', most votes first.",
                "ranked": "Return a list of strings like '1. Pizza', '2. Sushi', most votes first.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        merge = (
            "totals = {}\nfor name, count in votes.items():\n"
            "    totals[name.lower()] = totals.get(name.lower(), 0) + count\n"
            if v["merge_case"]
            else "totals = dict(votes)\n"
        )
        sort_key = "(-kv[1], kv[0].lower())" if v["tie_break"] == "alphabetical" else "-kv[1]"
        ties = (
            "if top:\n    top = [kv for kv in items if kv[1] >= top[-1][1]]\n"
            if v["include_ties"]
            else ""
        )
        result = {
            "names": "[name for name, _ in top]",
            "pairs": "top",
            "strings": '[f"{name} ({count})" for name, count in top]',
            "ranked": '[f"{i}. {name}" for i, (name, _) in enumerate(top, 1)]',
        }[v["output"]]
        items = (
            f"[(n, c) for n, c in totals.items() if c >= {v['min_votes']}]"
            if v["min_votes"]
            else "list(totals.items())"
        )
        return merge + (
            f"items = {items}\nitems.sort(key=lambda kv: {sort_key})\n"
            f"top = items[:max(k, 0)]\n{ties}return {result}\n"
        )

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        names = ["Tacos", "pizza", "Sushi", "burgers", "Pasta", "salad", "Curry", "Pizza", "ramen"]
        cases = []
        for _ in range(24):
            picked = rng.sample(names, rng.randint(3, 7))
            poll = {n: rng.choice([0, 1, 2, 3, 3, 4, 5, 5, 6, 8]) for n in picked}
            cases.append((poll, rng.randint(1, len(poll) + 1)))
        tie = {"Tacos": 5, "Pizza": 7, "Curry": 5, "sushi": 2, "Bao": 0}
        return [
            *cases,
            (tie, 2),
            (tie, 5),
            (tie, 0),
            ({"Pizza": 3, "sushi": 4, "pizza": 2, "Salad": 1}, 1),
            ({"zeta": 1, "Alpha": 1, "mid": 4, "beta": 0, "Gamma": 2}, 4),
            ({}, 3),
        ]


FAMILIES: tuple[Family, ...] = (
    ElectricityBill(),
    TaxiFare(),
    RunningPace(),
    ScaleRecipe(),
    DedupeEmails(),
    TopVoted(),
)
