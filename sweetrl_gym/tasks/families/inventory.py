"""Inventory: families of the bundled backend tasks."""

from __future__ import annotations

import random
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family

_BOUNDARY = {
    True: "Landing exactly on a threshold already counts (it's inclusive).",
    False: "You have to go strictly past a threshold; landing exactly on it doesn't count.",
}


class ReorderCheck(Family):
    name = "reorder_check"
    domain = "inventory"
    function_names = ("needs_reorder", "check_reorder", "should_reorder")
    params = ("on_hand", "daily_usage", "on_order")
    descriptions = (
        "I need a function that tells me whether it's time to reorder a product, given "
        "what's on the shelf, how fast it sells per day and what's already on order.",
        "Can you write something that checks stock levels and flags items I should reorder "
        "before I run out?",
        "I'd like a python function for my shop that decides when to place a new order "
        "with the supplier.",
    )
    facts = (
        Fact(
            "safety_stock",
            "threshold",
            options=(0, 10, 20, 50),
            default=0,
            keywords=("safety", "buffer", "cushion", "extra", "reserve"),
            answer=lambda v: (
                "I don't keep any safety stock."
                if v == 0
                else f"I keep {v} units of safety stock on top of the lead-time usage."
            ),
        ),
        Fact(
            "lead_time",
            "threshold",
            options=(3, 5, 7, 14),
            default=7,
            keywords=("lead", "delivery", "supplier", "arrive", "take"),
            answer="The supplier takes {v} days to deliver, so the reorder point is "
            "{v} days of usage plus any safety stock.",
        ),
        Fact(
            "count_on_order",
            "rule",
            options=(True, False),
            default=True,
            keywords=("incoming", "pending", "transit", "placed", "already"),
            answer=lambda v: (
                "Stock already on order counts toward what I have."
                if v
                else "Only count what's on the shelf; ignore stock already on order."
            ),
        ),
        Fact(
            "inclusive",
            "boundary",
            options=(True, False),
            default=True,
            keywords=("exactly", "equal", "boundary", "inclusive", "point"),
            answer=lambda v: (
                "Reorder when stock is at or below the reorder point."
                if v
                else "Reorder only when stock is strictly below the reorder point."
            ),
        ),
        Fact(
            "return_format",
            "return_format",
            options=("bool", "units", "text"),
            default="bool",
            keywords=("return", "output", "format", "quantity", "true"),
            answer={
                "bool": "Return True or False.",
                "units": "Return how many units to order (enough to get back up to the "
                "reorder point plus one more lead time of usage, rounded up), or 0 if "
                "no reorder is needed.",
                "text": 'Return the string "REORDER" or "OK".',
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        position = "on_hand + on_order" if v["count_on_order"] else "on_hand"
        cmp = "<=" if v["inclusive"] else "<"
        units = v["return_format"] == "units"
        code = [
            *(["import math"] if units else []),
            f"position = {position}",
            f"reorder_point = daily_usage * {v['lead_time']} + {v['safety_stock']}",
            f"need = position {cmp} reorder_point",
        ]
        code += {
            "bool": ["return need"],
            "text": ['return "REORDER" if need else "OK"'],
            "units": [
                "if not need:",
                "    return 0",
                f"return math.ceil(reorder_point + daily_usage * {v['lead_time']} - position)",
            ],
        }[v["return_format"]]
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        out = [
            (rng.randint(0, 250), rng.randint(1, 20), rng.choice([0, 0, 10, 25, 60]))
            for _ in range(20)
        ]
        for lead in (3, 5, 7, 14):
            for safety in (0, 10, 20, 50):
                if lead != v["lead_time"] and safety != v["safety_stock"]:
                    continue
                usage = rng.randint(2, 12)
                point = usage * lead + safety
                out += [
                    (point, usage, 0),
                    (point - 1, usage, 0),
                    (point + 1, usage, 0),
                    (point - 8, usage, 8),
                    (point - 3, usage, 5),
                ]
        return [*out, (0, 0, 0), (4, 2.5, 0), (30, 4.5, 0)]


class RestockQuantity(Family):
    name = "restock_quantity"
    domain = "inventory"
    function_names = ("restock_quantity", "units_to_order", "restock_amount")
    params = ("current_stock", "target_level")
    descriptions = (
        "I need a function that works out how much to order to bring a product back up to "
        "its target stock level. We buy from the supplier in packs.",
        "Can you write something that tells me how much to restock, given the current stock "
        "and the level I want to get back to? Stuff comes in cases.",
    )
    facts = (
        Fact(
            "pack_size",
            "unit",
            options=(6, 10, 12, 24),
            default=12,
            keywords=("pack", "case", "box", "size", "bundle"),
            answer="Each pack holds {v} units and I can only order whole packs.",
        ),
        Fact(
            "pack_rounding",
            "rounding",
            options=("up", "nearest", "down"),
            default="up",
            keywords=("round", "partial", "fraction", "leftover", "half"),
            answer={
                "up": "Round a partial pack up to a whole pack.",
                "nearest": "Round to the nearest whole pack (half a pack or more rounds up).",
                "down": "Round a partial pack down; never order past the target.",
            },
        ),
        Fact(
            "max_packs",
            "threshold",
            options=(None, 5, 10, 20),
            default=None,
            keywords=("maximum", "max", "cap", "limit", "most"),
            answer=lambda v: (
                "There's no limit on how much I order at once."
                if v is None
                else f"I never order more than {v} packs at once."
            ),
        ),
        Fact(
            "negative_stock",
            "edge_case",
            options=("include", "ignore"),
            default="include",
            keywords=("negative", "backorder", "owed", "zero", "below"),
            answer=lambda v: (
                "Negative stock means backorders, so order enough to cover them too."
                if v == "include"
                else "Treat negative stock as zero; don't order extra to cover backorders."
            ),
        ),
        Fact(
            "return_format",
            "return_format",
            options=("units", "packs", "both"),
            default="units",
            keywords=("return", "output", "format", "dict", "units"),
            answer={
                "units": "Return the number of units to order.",
                "packs": "Return the number of packs to order.",
                "both": 'Return a dict like {"packs": 3, "units": 36}.',
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        stock = "current_stock" if v["negative_stock"] == "include" else "max(0, current_stock)"
        packs = {
            "up": "math.ceil(needed / PACK)",
            "nearest": "math.floor(needed / PACK + 0.5)",
            "down": "needed // PACK",
        }[v["pack_rounding"]]
        cap = "" if v["max_packs"] is None else f"\n        packs = min(packs, {v['max_packs']})"
        ret = {
            "units": "packs * PACK",
            "packs": "packs",
            "both": '{"packs": packs, "units": packs * PACK}',
        }[v["return_format"]]
        return f"""
        import math
        PACK = {v["pack_size"]}
        needed = target_level - {stock}
        packs = {packs} if needed > 0 else 0{cap}
        return {ret}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        out = [(rng.randint(-20, 120), rng.choice([60, 100, 150, 240, 500])) for _ in range(20)]
        p = v["pack_size"]
        return [
            *out,
            (0, 100),
            (100, 100),
            (120, 100),
            (-15, 100),
            (-30, 30),
            (0, 700),
            (-10, 600),
            (50, 50 + p),
            (50, 51 + p),
            (50, 50 + p // 2),
            (50, 49 + p // 2),
            (10, 10 + 3 * p),
            (0, 17),
            (5, 35),
            (0, 250),
            (0, 1000),
            (-5, 10),
            (-8, 20),
            (-3, 3),
            (-7, 40),
        ]


class StockValue(Family):
    name = "stock_value"
    domain = "inventory"
    function_names = ("stock_value", "inventory_value", "total_stock_value")
    params = ("items",)
    descriptions = (
        "I need a function that adds up what my inventory is worth. Each item is a pair "
        "of quantity and unit cost.",
        "Can you write something that gives me the total value of the stock in my "
        "storeroom from a list of (quantity, unit cost) entries?",
    )
    facts = (
        Fact(
            "negative_qty",
            "edge_case",
            options=("include", "skip", "abs"),
            default="include",
            keywords=("negative", "minus", "refund", "below", "zero"),
            answer={
                "include": "Negative quantities just count as negative value.",
                "skip": "Skip any line with a negative quantity.",
                "abs": "A negative quantity is a typo: use its absolute value.",
            },
        ),
        Fact(
            "markup",
            "rate",
            options=(0, 25, 40, 50),
            default=0,
            keywords=("retail", "markup", "selling", "basis", "price"),
            answer=lambda v: (
                "Value the stock at cost, no markup."
                if v == 0
                else f"Value the stock at retail: unit cost plus a {v}% markup."
            ),
        ),
        Fact(
            "shrinkage",
            "rate",
            options=(0, 2, 5, 10),
            default=0,
            keywords=("shrinkage", "loss", "theft", "damage", "write"),
            answer=lambda v: (
                "Don't allow for any shrinkage."
                if v == 0
                else f"Knock {v}% off the total for expected shrinkage."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=("total_cents", "line_cents", "whole", "none"),
            default="total_cents",
            keywords=("round", "cents", "decimal", "line", "penny"),
            answer={
                "total_cents": "Round the final total to cents.",
                "line_cents": "Round each line to cents, then round the final total to cents.",
                "whole": "Round the final total to whole dollars.",
                "none": "Don't round anything.",
            },
        ),
        Fact(
            "return_format",
            "return_format",
            options=("number", "with_count"),
            default="number",
            keywords=("return", "output", "format", "dict", "count"),
            answer=lambda v: (
                "Return just the total value."
                if v == "number"
                else 'Return a dict like {"total": 123.45, "lines": 4}, where lines counts '
                "the entries that were included."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        line = "qty * cost" if v["markup"] == 0 else f"qty * cost * {100 + v['markup']} / 100"
        if v["rounding"] == "line_cents":
            line = f"round({line}, 2)"
        counted = v["return_format"] == "with_count"
        code = ["total = 0.0", *(["lines = 0"] if counted else []), "for qty, cost in items:"]
        code += {
            "include": [],
            "skip": ["    if qty < 0:", "        continue"],
            "abs": ["    qty = abs(qty)"],
        }[v["negative_qty"]]
        code += [f"    total += {line}", *(["    lines += 1"] if counted else [])]
        if v["shrinkage"]:
            code.append(f"total = total * {100 - v['shrinkage']} / 100")
        code += {
            "total_cents": ["total = round(total, 2)"],
            "line_cents": ["total = round(total, 2)"],
            "whole": ["total = round(total)"],
            "none": [],
        }[v["rounding"]]
        code.append('return {"total": total, "lines": lines}' if counted else "return total")
        return "\n".join(code)

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        costs = [0.125, 0.333, 1.4975, 2.005, 12.3456, 0.0675, 3.99, 19.5, 7.25]

        def items(n: int, neg: bool = False) -> list[list[Any]]:
            lo = -5 if neg else 0
            return [[rng.randint(lo, 40), rng.choice(costs)] for _ in range(n)]

        out = [(items(rng.randint(1, 5), neg=rng.random() < 0.4),) for _ in range(24)]
        return [
            *out,
            ([],),
            ([[3, 0.125], [7, 0.333]],),
            ([[-2, 4.5], [10, 1.25]],),
            ([[-3, 2.005], [5, 12.3456], [1, 0.0675]],),
            ([[100, 19.99]],),
        ]


class BulkPrice(Family):
    name = "bulk_price"
    domain = "inventory"
    function_names = ("bulk_price", "order_price", "tiered_price")
    params = ("quantity", "unit_price")
    descriptions = (
        "I need a function that prices an order with bulk discounts: the more units "
        "someone buys, the cheaper it gets.",
        "Can you write something that works out the total for a wholesale order, with "
        "quantity discount tiers?",
    )
    facts = (
        Fact(
            "tiers",
            "threshold",
            options=((10, 50, 100), (5, 20, 50), (12, 24, 48), (25, 100, 250)),
            default=(10, 50, 100),
            keywords=("tier", "threshold", "break", "level", "start"),
            answer=lambda v: f"The discount tiers start at {v[0]}, {v[1]} and {v[2]} units.",
        ),
        Fact(
            "discounts",
            "rate",
            options=((5, 10, 15), (10, 15, 20), (2, 5, 10), (5, 10, 20)),
            default=(5, 10, 15),
            keywords=("discount", "percent", "off", "saving", "much"),
            answer=lambda v: f"The tiers give {v[0]}%, {v[1]}% and {v[2]}% off.",
        ),
        Fact(
            "marginal",
            "rule",
            options=(False, True),
            default=False,
            keywords=("whole", "marginal", "bracket", "entire", "each"),
            answer=lambda v: (
                "Once a tier is reached its discount applies to the whole order."
                if not v
                else "Tiers work like tax brackets: only the units past a tier's "
                "threshold get that tier's discount."
            ),
        ),
        Fact(
            "inclusive",
            "boundary",
            options=(True, False),
            default=True,
            keywords=("exactly", "inclusive", "reach", "equal", "boundary"),
            answer=_BOUNDARY,
        ),
        Fact(
            "rounding",
            "rounding",
            options=(2, None, 0),
            default=2,
            keywords=("round", "cents", "decimal", "dollar"),
            answer={
                2: "Round the total to cents.",
                None: "Don't round the total.",
                0: "Round the total to whole dollars.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        cmp = ">=" if v["inclusive"] else ">"
        if v["marginal"]:
            total = "sum(unit_price * (100 - rate_for(k)) / 100 for k in range(1, quantity + 1))"
        else:
            total = "quantity * unit_price * (100 - rate_for(quantity)) / 100"
        ret = "total" if v["rounding"] is None else f"round(total, {v['rounding']})"
        return f"""
        def rate_for(n):
            rate = 0
            for threshold, discount in zip({v["tiers"]}, {v["discounts"]}):
                if n {cmp} threshold:
                    rate = discount
            return rate

        if quantity <= 0:
            return 0.0
        total = {total}
        return {ret}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        prices = [4.99, 12.5, 0.35, 19.99, 2.25, 7.77]
        qtys = {
            q + d
            for tiers in (v["tiers"], (10, 50, 100), (5, 20, 50), (12, 24, 48), (25, 100, 250))
            for q in tiers
            for d in (-1, 0, 1)
        }
        out = [(q, rng.choice(prices)) for q in sorted(qtys)]
        return (
            out
            + [(rng.randint(1, 400), rng.choice(prices)) for _ in range(10)]
            + [(0, 5.0), (1, 3.33), (333, 1.01)]
        )


class ExpiryMarkdown(Family):
    name = "expiry_markdown"
    domain = "inventory"
    function_names = ("markdown_price", "expiry_price", "clearance_price")
    params = ("price", "days_left")
    descriptions = (
        "I need a function that marks down perishable items as they get close to their "
        "expiry date, given the regular price and the days left.",
        "Can you write something for my grocery shop that works out the reduced price of "
        "food that's about to expire?",
    )
    facts = (
        Fact(
            "windows",
            "threshold",
            options=((3, 1), (5, 2), (7, 3), (2, 1)),
            default=(3, 1),
            keywords=("days", "window", "start", "close", "soon"),
            answer=lambda v: (
                f"The first markdown starts at {v[0]} days left and the bigger "
                f"one at {v[1]} day{'s' if v[1] > 1 else ''} left."
            ),
        ),
        Fact(
            "percents",
            "rate",
            options=((25, 50), (20, 40), (30, 70), (10, 50)),
            default=(25, 50),
            keywords=("percent", "markdown", "off", "discount", "much"),
            answer=lambda v: f"The first markdown is {v[0]}% off and the bigger one {v[1]}% off.",
        ),
        Fact(
            "inclusive",
            "boundary",
            options=(True, False),
            default=True,
            keywords=("exactly", "inclusive", "equal", "boundary", "precisely"),
            answer=lambda v: (
                "With exactly that many days left the markdown already applies."
                if v
                else "The markdown only applies with strictly fewer days left than that."
            ),
        ),
        Fact(
            "expired",
            "edge_case",
            options=("deepest", "zero", "flag"),
            default="deepest",
            keywords=("expired", "past", "negative", "pull", "after"),
            answer={
                "deepest": "Expired items (negative days left) keep the biggest markdown.",
                "zero": "Expired items (negative days left) are worth 0.0.",
                "flag": "Return -1 for expired items (negative days left) so I pull them.",
            },
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "nickel", "whole"),
            default="cents",
            keywords=("round", "cents", "nickel", "nearest", "dollar"),
            answer={
                "cents": "Round the price to cents.",
                "nickel": "Round the price to the nearest 5 cents.",
                "whole": "Round the price to whole dollars.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        cmp = "<=" if v["inclusive"] else "<"
        (outer, inner), (small, big) = v["windows"], v["percents"]
        expired = {
            "deepest": "",
            "zero": "\n        if days_left < 0:\n            return 0.0",
            "flag": "\n        if days_left < 0:\n            return -1",
        }[v["expired"]]
        final = {
            "cents": "round(new_price, 2)",
            "nickel": "round(round(new_price * 20) / 20, 2)",
            "whole": "round(new_price)",
        }[v["rounding"]]
        return f"""{expired}
        if days_left {cmp} {inner}:
            percent = {big}
        elif days_left {cmp} {outer}:
            percent = {small}
        else:
            percent = 0
        new_price = price * (100 - percent) / 100
        return {final}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        prices = [3.99, 12.49, 7.25, 1.79, 24.0, 5.55, 9.99, 0.89]
        out = [
            (p, d)
            for d in range(-3, 12)
            for p in (rng.choice(prices), rng.choice([24.0, 39.99, 59.5]))
        ]
        return out + [(round(rng.uniform(1, 30), 2), rng.randint(-2, 9)) for _ in range(12)]


FAMILIES: tuple[Family, ...] = (
    ReorderCheck(),
    RestockQuantity(),
    StockValue(),
    BulkPrice(),
    ExpiryMarkdown(),
)
