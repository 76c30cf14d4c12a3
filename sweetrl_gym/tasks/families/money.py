"""Money: fees, prices, payments."""

from __future__ import annotations

import random
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family

_ROUNDING = {None: "Don't round the result.", 0: "Round to whole dollars.", 2: "Round to cents."}


def _rounded(expr: str, digits: Any) -> str:
    return expr if digits is None else f"round({expr}, {digits})"


class LateFee(Family):
    name = "late_fee"
    domain = "money"
    function_names = ("late_fee", "compute_late_fee", "overdue_charge")
    params = ("days_late", "balance")
    descriptions = (
        "I need a function that works out the late fee on an overdue bill.",
        "Can you write me something that calculates how much extra to charge a customer "
        "who pays late?",
        "I'd like a python function for the penalty on late payments.",
    )
    facts = (
        Fact(
            "grace_days",
            "threshold",
            options=(0, 3, 5, 7),
            default=0,
            keywords=("grace", "period", "free", "days"),
            answer=lambda v: (
                "There is no grace period."
                if v == 0
                else f"The first {v} days late are free (a grace period)."
            ),
        ),
        Fact(
            "daily_rate",
            "rate",
            options=(0.5, 1.0, 1.5, 2.0),
            default=1.0,
            keywords=("daily", "per", "day", "percent", "charge"),
            answer="Each day late after any grace period costs {v}% of the balance.",
        ),
        Fact(
            "cap",
            "threshold",
            options=(None, 25, 50),
            default=None,
            keywords=("cap", "maximum", "max", "most", "limit"),
            answer=lambda v: (
                "There is no cap on the fee." if v is None else f"The fee is capped at ${v}."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=(None, 0, 2),
            default=2,
            keywords=("round", "cents", "decimal"),
            answer=_ROUNDING,
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        capped = "fee" if v["cap"] is None else f"min(fee, {v['cap']})"
        return f"""
        chargeable = max(0, days_late - {v["grace_days"]})
        fee = balance * {v["daily_rate"]} / 100 * chargeable
        return {_rounded(capped, v["rounding"])}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        days = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 15, 30, 45, 60]
        balances = [99.99, 250.0, 1234.56, 4321.1, 10000.0]
        return [(rng.choice(days), rng.choice(balances)) for _ in range(30)] + [
            (v["grace_days"], 500.0),
            (v["grace_days"] + 1, 777.77),
            (90, 9999.99),
        ]


class ShippingCost(Family):
    name = "shipping_cost"
    domain = "money"
    function_names = ("shipping_cost", "calc_shipping", "shipping_fee")
    params = ("order_total", "weight_kg")
    descriptions = (
        "Write a function that tells me what to charge for shipping on an order.",
        "I need something to compute shipping fees for my online shop; big orders ship free.",
    )
    facts = (
        Fact(
            "free_over",
            "threshold",
            options=(35, 50, 75, 100),
            default=50,
            keywords=("free", "shipping", "threshold", "order", "total"),
            answer="Orders of ${v} or more ship free.",
        ),
        Fact(
            "base_fee",
            "rate",
            options=(4.99, 5.99, 7.5),
            default=4.99,
            keywords=("base", "flat", "fee", "start"),
            answer="The flat base fee is ${v}.",
        ),
        Fact(
            "per_kg",
            "rate",
            options=(0.5, 1.0, 2.5),
            default=1.0,
            keywords=("weight", "kg", "heavy", "per"),
            answer="Add ${v} per kilogram of weight.",
        ),
        Fact(
            "weight_rounding",
            "rounding",
            options=("exact", "up"),
            default="exact",
            keywords=("partial", "whole", "fraction", "up"),
            answer=lambda v: (
                "Charge for the exact weight."
                if v == "exact"
                else "Round the weight up to whole kilograms before pricing."
            ),
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        weight = "weight_kg" if v["weight_rounding"] == "exact" else "math.ceil(weight_kg)"
        return f"""
        import math
        if order_total >= {v["free_over"]}:
            return 0.0
        return round({v["base_fee"]} + {v["per_kg"]} * {weight}, 2)
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        totals = [10.0, 20.0, 34.99, 35.0, 49.99, 50.0, 60.0, 74.99, 75.0, 99.99, 100.0, 150.0]
        return [(t, rng.choice([0.5, 1.2, 3.0, 7.5])) for t in totals] + [
            (rng.uniform(5, 150).__round__(2), rng.choice([0.3, 2.0, 4.4])) for _ in range(12)
        ]


FAMILIES: tuple[Family, ...] = (LateFee(), ShippingCost())
