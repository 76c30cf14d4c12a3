"""Finance: bills, loans, taxes, discounts, exchange and wages."""

from __future__ import annotations

import random
from typing import Any

from sweetrl_gym.tasks.family import Fact, Family


def _money(rng: random.Random, lo: float, hi: float) -> float:
    return round(rng.uniform(lo, hi), 2)


class TipSplit(Family):
    name = "tip_split"
    domain = "money"
    function_names = ("split_bill", "tip_split", "share_per_person")
    params = ("bill", "people")
    descriptions = (
        "I need a function that works out what each person pays when we split a restaurant "
        "bill and add a tip.",
        "Can you write something that adds the tip to a dinner bill and splits it among the group?",
        "I'd like a python helper for splitting the check between friends, tip included.",
    )
    facts = (
        Fact(
            "tip_percent",
            "rate",
            options=(15, 18, 20, 25),
            default=15,
            keywords=("tip", "percent", "gratuity", "percentage"),
            answer="The tip is {v}% of the bill.",
        ),
        Fact(
            "tax_rate",
            "rate",
            options=(0, 7, 10),
            default=0,
            keywords=("tax", "sales", "included", "pretax"),
            answer=lambda v: (
                "The bill already includes tax, so don't add any."
                if v == 0
                else f"Add {v}% sales tax on top of the bill; the tip is on the pre-tax amount."
            ),
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "up_whole", "nearest_whole"),
            default="cents",
            keywords=("round", "cents", "whole", "dollar"),
            answer={
                "cents": "Round each person's share to the cent.",
                "up_whole": "Round each person's share up to the next whole dollar.",
                "nearest_whole": "Round each person's share to the nearest whole dollar (half up).",
            },
        ),
        Fact(
            "no_people",
            "edge_case",
            options=("zero", "one", "minus_one"),
            default="zero",
            keywords=("zero", "nobody", "negative", "invalid", "people", "0"),
            answer={
                "zero": "If the number of people is zero or negative, return 0.",
                "one": "If the number of people is zero or negative, treat it as one person.",
                "minus_one": "If the number of people is zero or negative, return -1.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("number", "tuple", "dict", "string"),
            default="number",
            keywords=("format", "tuple", "dictionary", "string", "breakdown"),
            answer={
                "number": "Just return each person's share as a number.",
                "tuple": "Return a tuple (total_tip, share_per_person), tip rounded to cents.",
                "dict": "Return a dict with keys 'tip', 'total' and 'per_person' "
                "(tip and total rounded to cents).",
                "string": "Return a string like '$23.50 per person'.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        edge = {"zero": "return 0", "one": "people = 1", "minus_one": "return -1"}
        share = {
            "cents": "round(total / people, 2)",
            "up_whole": "math.ceil(round(total / people, 2))",
            "nearest_whole": "math.floor(total / people + 0.5)",
        }
        out = {
            "number": "share",
            "tuple": "(round(tip, 2), share)",
            "dict": '{"tip": round(tip, 2), "total": round(total, 2), "per_person": share}',
            "string": 'f"${share:.2f} per person"',
        }
        return f"""
        import math
        if people <= 0:
            {edge[v["no_people"]]}
        tip = bill * {v["tip_percent"]} / 100
        total = bill * (1 + {v["tax_rate"]} / 100) + tip
        share = {share[v["rounding"]]}
        return {out[v["output"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        cases = [(_money(rng, 15, 400), rng.randint(1, 8)) for _ in range(24)]
        return [*cases, (120.0, 4), (87.45, 3), (64.1, 0), (250.0, -2), (33.33, 1)]


class LoanPayment(Family):
    name = "loan_payment"
    domain = "money"
    function_names = ("loan_payment", "monthly_payment", "installment_amount")
    params = ("principal", "annual_rate", "months")
    descriptions = (
        "I need a function that works out the monthly payment on a loan.",
        "Can you write something that tells me what each installment is when I borrow money "
        "and pay it back over some months?",
        "I'd like a python function for loan repayments given the amount, the interest rate and "
        "the number of months.",
    )
    facts = (
        Fact(
            "method",
            "rule",
            options=("amortized", "simple", "compound"),
            default="amortized",
            keywords=("interest", "compound", "simple", "amortized", "formula"),
            answer={
                "amortized": "Use the standard amortized loan formula with monthly compounding "
                "(equal payments, rate/12 per month).",
                "simple": "Use simple interest: principal * (1 + rate * months / 12), divided "
                "evenly over the months.",
                "compound": "Compound monthly on the whole principal for the full term "
                "(principal * (1 + rate/12) ** months) and divide that evenly over the months.",
            },
        ),
        Fact(
            "rate_unit",
            "unit",
            options=("percent", "fraction"),
            default="percent",
            keywords=("unit", "percent", "fraction", "expressed", "given"),
            answer={
                "percent": "The annual rate is given in percent, e.g. 6.5 means 6.5%.",
                "fraction": "The annual rate is given as a fraction, e.g. 0.065 means 6.5%.",
            },
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "up_cents", "whole"),
            default="cents",
            keywords=("round", "cents", "nearest", "up"),
            answer={
                "cents": "Round the monthly payment to the nearest cent.",
                "up_cents": "Round the monthly payment up to the next cent.",
                "whole": "Round the monthly payment to the nearest whole dollar.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("payment", "total", "tuple"),
            default="payment",
            keywords=("return", "tuple", "total", "paid", "output"),
            answer={
                "payment": "Return just the (rounded) monthly payment.",
                "total": "Return the total paid over the loan: the rounded monthly payment times "
                "the months, rounded to cents.",
                "tuple": "Return a tuple (monthly_payment, total_interest), where total interest "
                "is payment * months - principal rounded to cents.",
            },
        ),
        Fact(
            "no_months",
            "edge_case",
            options=("zero", "principal"),
            default="zero",
            keywords=("zero", "negative", "term", "invalid", "length"),
            answer={
                "zero": "If the number of months is zero or negative, return 0.",
                "principal": "If the number of months is zero or negative, the whole principal "
                "is due at once, so return the principal.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        rate = "annual_rate / 100" if v["rate_unit"] == "percent" else "annual_rate"
        formula = {
            "amortized": "principal / months if r == 0 else "
            "principal * (r / 12) / (1 - (1 + r / 12) ** -months)",
            "simple": "principal * (1 + r * months / 12) / months",
            "compound": "principal * (1 + r / 12) ** months / months",
        }
        rounded = {
            "cents": "round(payment, 2)",
            "up_cents": "math.ceil(round(payment * 100, 6)) / 100",
            "whole": "math.floor(payment + 0.5)",
        }
        out = {
            "payment": "payment",
            "total": "round(payment * months, 2)",
            "tuple": "(payment, round(payment * months - principal, 2))",
        }
        edge = "0.0" if v["no_months"] == "zero" else "principal"
        return f"""
        import math
        if months <= 0:
            return {edge}
        r = {rate}
        payment = {formula[v["method"]]}
        payment = {rounded[v["rounding"]]}
        return {out[v["output"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        scale = 1 if v["rate_unit"] == "percent" else 100
        rates = (3.5, 4.25, 5.0, 6.9, 8.0, 12.0, 18.5)
        terms = (6, 12, 18, 24, 36, 48, 60, 120, 360)
        cases = [
            (float(rng.randrange(1000, 50000, 250)), rng.choice(rates), rng.choice(terms))
            for _ in range(22)
        ]
        cases += [(12000.0, 6.0, 12), (5000.0, 0.0, 10), (2500.0, 9.0, 1)]
        cases += [(8000.0, 5.5, 0), (3000.0, 7.0, -6)]
        return [(p, r / scale, m) for p, r, m in cases]


class IncomeTax(Family):
    name = "income_tax"
    domain = "money"
    function_names = ("income_tax", "compute_tax", "tax_owed")
    params = ("income",)
    descriptions = (
        "I need a function that works out how much income tax someone owes using tax brackets.",
        "Can you write me a python function that calculates the tax on a yearly income?",
        "I'd like something that takes an income and returns the tax due under our bracket system.",
    )
    facts = (
        Fact(
            "limits",
            "threshold",
            options=([10000, 40000], [20000, 80000], [12500, 50000]),
            default=[10000, 40000],
            keywords=("bracket", "threshold", "limit", "boundary", "band"),
            answer=lambda v: (
                f"There are three brackets: up to ${v[0]:,}, from ${v[0]:,} to ${v[1]:,}, "
                f"and above ${v[1]:,}."
            ),
        ),
        Fact(
            "rates",
            "rate",
            options=([10, 20, 30], [0, 20, 40], [5, 15, 25], [10, 25, 35]),
            default=[10, 20, 30],
            keywords=("rate", "percent", "percentage", "taxed"),
            answer=lambda v: (
                f"The bracket rates are {v[0]}%, {v[1]}% and {v[2]}%, lowest bracket first."
            ),
        ),
        Fact(
            "deduction",
            "threshold",
            options=(0, 5000, 12000),
            default=0,
            keywords=("deduction", "allowance", "exempt", "subtract", "standard"),
            answer=lambda v: (
                "There is no deduction; the whole income is taxable."
                if v == 0
                else f"Subtract a ${v:,} deduction from the income first (not below zero)."
            ),
        ),
        Fact(
            "method",
            "rule",
            options=("marginal", "flat_top"),
            default="marginal",
            keywords=("marginal", "progressive", "slice", "flat", "portion"),
            answer={
                "marginal": "It's progressive: each rate only applies to the part of the income "
                "inside its bracket.",
                "flat_top": "The whole taxable income is taxed at the rate of the highest bracket "
                "it reaches; a bracket includes its upper limit.",
            },
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "whole", "down_whole"),
            default="cents",
            keywords=("round", "cents", "dollar", "down"),
            answer={
                "cents": "Round the tax to cents.",
                "whole": "Round the tax to the nearest whole dollar (half up).",
                "down_whole": "Drop the cents: round the tax down to a whole dollar.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        (t1, t2), (r1, r2, r3) = v["limits"], v["rates"]
        if v["method"] == "marginal":
            tax = (
                f"(min(taxable, {t1}) * {r1} + max(0, min(taxable, {t2}) - {t1}) * {r2}"
                f" + max(0, taxable - {t2}) * {r3}) / 100"
            )
        else:
            tax = (
                f"taxable * ({r1} if taxable <= {t1} else {r2} if taxable <= {t2} else {r3}) / 100"
            )
        rounded = {
            "cents": "round(tax, 2)",
            "whole": "math.floor(tax + 0.5)",
            "down_whole": "math.floor(tax)",
        }
        return f"""
        import math
        taxable = max(0, income - {v["deduction"]})
        tax = {tax}
        return {rounded[v["rounding"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        t1, t2 = v["limits"]
        cases = [_money(rng, 1000, 150000) for _ in range(18)]
        d = v["deduction"]
        edges = [t1 + d, t2 + d, t1 + d + 0.01, t2 + d + 0.01, t1 + 2500.5, t2 + 7250.25]
        return [(x,) for x in [*edges, *cases, 0, -500.0, 3000.0]]


class CartDiscount(Family):
    name = "cart_discount"
    domain = "money"
    function_names = ("cart_total", "apply_coupon", "discounted_total")
    params = ("prices", "coupon_percent")
    descriptions = (
        "I need a function that applies a coupon to a shopping cart and gives the amount to pay.",
        "Can you write something that takes the item prices in a cart and a coupon percentage "
        "and works out the discounted total?",
        "I'd like a python function for checkout discounts in my web shop.",
    )
    facts = (
        Fact(
            "min_spend",
            "threshold",
            options=(0, 25, 50, 100),
            default=0,
            keywords=("minimum", "spend", "least", "qualify"),
            answer=lambda v: (
                "The coupon works on any cart, there is no minimum spend."
                if v == 0
                else f"The coupon only applies if the cart subtotal is at least ${v}."
            ),
        ),
        Fact(
            "cap",
            "threshold",
            options=(None, 15, 25, 50),
            default=None,
            keywords=("cap", "maximum", "max", "most", "limit"),
            answer=lambda v: (
                "There is no cap on the discount."
                if v is None
                else f"The total discount is capped at ${v}."
            ),
        ),
        Fact(
            "bulk",
            "rule",
            options=("none", "add5", "after5", "add10"),
            default="none",
            keywords=("bulk", "items", "extra", "stack", "combine"),
            answer={
                "none": "There is no extra discount for big carts, only the coupon.",
                "add5": "Carts with 5 or more items get an extra 5% off, simply added to the "
                "coupon percent.",
                "after5": "Carts with 5 or more items get an extra 5% off, applied after the "
                "coupon to the already discounted amount.",
                "add10": "Carts with 5 or more items get an extra 10% off, simply added to the "
                "coupon percent.",
            },
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "whole", "down_whole"),
            default="cents",
            keywords=("round", "cents", "dollar", "down"),
            answer={
                "cents": "Round amounts to cents.",
                "whole": "Round amounts to the nearest whole dollar (half up).",
                "down_whole": "Drop the cents: round amounts down to a whole dollar.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("total", "tuple", "saved"),
            default="total",
            keywords=("return", "tuple", "saved", "output", "savings"),
            answer={
                "total": "Return just the amount to pay after the discount.",
                "tuple": "Return a tuple (amount_to_pay, discount_amount).",
                "saved": "Return only the discount amount, i.e. how much the customer saves.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        bulk = v["bulk"]
        extra = 0 if bulk == "none" else 10 if bulk == "add10" else 5
        if bulk == "after5":
            discount = "subtotal - subtotal * (1 - pct / 100) * (1 - extra / 100)"
        else:
            discount = "subtotal * (pct + extra) / 100"
        if v["cap"] is not None:
            discount = f"min({discount}, {v['cap']})"
        rnd = {
            "cents": "round(x, 2)",
            "whole": "math.floor(x + 0.5)",
            "down_whole": "math.floor(x)",
        }[v["rounding"]]
        out = {"total": "r(subtotal - discount)", "saved": "r(discount)"}
        out["tuple"] = f"({out['total']}, {out['saved']})"
        return f"""
        import math
        def r(x):
            return {rnd}
        subtotal = round(sum(prices), 2)
        pct = coupon_percent if subtotal >= {v["min_spend"]} else 0
        extra = {extra} if len(prices) >= 5 else 0
        discount = {discount}
        return {out[v["output"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        m = v["min_spend"]
        cases = [
            ([_money(rng, 2, 90) for _ in range(rng.randint(1, 7))], rng.choice((10, 15, 20, 25)))
            for _ in range(20)
        ]
        cases += [([m / 2, m / 2], 20), ([m - 0.01], 20), ([m + 0.01], 15)]
        cases += [([49.99, 120.5, 80.25, 15.0, 60.0], 25), ([12.5, 8.75, 3.2, 9.99], 10)]
        cases += [([19.99] * 6, 15), ([], 20), ([250.0, 199.99], 20), ([6.0] * 5, 20)]
        cases += [([12.5], 20), ([40.0], 20), ([75.0], 15), ([9.5, 7.25, 12.0, 8.8, 10.1], 10)]
        cases += [([21.0] * 5, 5), ([20.39] * 5, 5), ([20.98] * 5, 5)]
        return cases


class CurrencyExchange(Family):
    name = "currency_exchange"
    domain = "money"
    function_names = ("convert_currency", "exchange_amount", "currency_exchange")
    params = ("amount", "rate")
    descriptions = (
        "I need a function that converts money from one currency to another and takes our fee.",
        "Can you write something for my exchange counter that tells a customer how much they "
        "get back for their cash?",
        "I'd like a python function that does a currency conversion, given the amount and the "
        "exchange rate, minus the service fee.",
    )
    facts = (
        Fact(
            "fee_percent",
            "rate",
            options=(1, 0.5, 2, 3),
            default=1,
            keywords=("percent", "percentage", "commission", "service", "cut"),
            answer="The fee is {v}% of the amount being exchanged.",
        ),
        Fact(
            "min_fee",
            "threshold",
            options=(0, 2, 5),
            default=0,
            keywords=("minimum", "least", "lowest", "min", "smallest"),
            answer=lambda v: (
                "There is no minimum fee."
                if v == 0
                else f"The fee is at least {v} units of the original currency."
            ),
        ),
        Fact(
            "direction",
            "unit",
            options=("multiply", "divide"),
            default="multiply",
            keywords=("direction", "multiply", "divide", "quoted", "per"),
            answer={
                "multiply": "The rate is how much of the new currency one unit of the original "
                "buys, so multiply by it.",
                "divide": "The rate is how much of the original currency one unit of the new one "
                "costs, so divide by it.",
            },
        ),
        Fact(
            "rounding",
            "rounding",
            options=("cents", "down_cents", "whole"),
            default="cents",
            keywords=("round", "cents", "decimal", "whole"),
            answer={
                "cents": "Round the result to 2 decimals.",
                "down_cents": "Round the result down to 2 decimals (we never give out the "
                "fraction).",
                "whole": "Round the result to a whole number (half up); the new currency has "
                "no cents.",
            },
        ),
        Fact(
            "bad_amount",
            "edge_case",
            options=("zero", "minus_one", "message"),
            default="zero",
            keywords=("zero", "negative", "invalid", "nothing", "0"),
            answer={
                "zero": "If the amount is zero or negative, return 0.",
                "minus_one": "If the amount is zero or negative, return -1.",
                "message": "If the amount is zero or negative, return the string 'invalid amount'.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        edge = {"zero": "0.0", "minus_one": "-1", "message": "'invalid amount'"}
        convert = "net * rate" if v["direction"] == "multiply" else "net / rate"
        rounded = {
            "cents": "round(result, 2)",
            "down_cents": "math.floor(round(result * 100, 6)) / 100",
            "whole": "math.floor(result + 0.5)",
        }
        return f"""
        import math
        if amount <= 0:
            return {edge[v["bad_amount"]]}
        fee = max(amount * {v["fee_percent"]} / 100, {v["min_fee"]})
        net = max(amount - fee, 0)
        result = {convert}
        return {rounded[v["rounding"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        rates = (0.92, 1.27, 0.78, 149.35, 7.31, 0.0067, 1.0837)
        cases = [(_money(rng, 1, 3000), rng.choice(rates)) for _ in range(22)]
        cases += [(10.0, 1.27), (40.0, 0.92), (150.0, 149.35), (3.5, 7.31)]
        return [*cases, (0.0, 1.1), (-25.0, 0.85)]


class OvertimePay(Family):
    name = "overtime_pay"
    domain = "money"
    function_names = ("weekly_pay", "overtime_pay", "gross_wages")
    params = ("hours", "hourly_rate")
    descriptions = (
        "I need a function that works out an employee's pay for the week, including overtime.",
        "Can you write something that computes weekly wages from the hours worked and the "
        "hourly rate, paying extra for overtime?",
        "I'd like a python function for our payroll that handles overtime hours.",
    )
    facts = (
        Fact(
            "threshold",
            "threshold",
            options=(40, 35, 37.5, 44),
            default=40,
            keywords=("after", "threshold", "start", "kick", "beyond"),
            answer="Overtime starts after {v} hours in the week.",
        ),
        Fact(
            "multiplier",
            "rate",
            options=(1.5, 1.25, 1.75),
            default=1.5,
            keywords=("multiplier", "half", "premium", "factor"),
            answer="Overtime hours are paid at {v} times the normal rate.",
        ),
        Fact(
            "double_after",
            "threshold",
            options=(None, 50, 60),
            default=None,
            keywords=("double", "twice", "second", "tier", "doubletime"),
            answer=lambda v: (
                "There is no double time."
                if v is None
                else f"Hours beyond {v} in the week are paid double (2x the normal rate)."
            ),
        ),
        Fact(
            "hours_rounding",
            "rounding",
            options=("exact", "quarter_down", "quarter_nearest", "half_down"),
            default="exact",
            keywords=("round", "quarter", "minutes", "clock", "fraction"),
            answer={
                "exact": "Use the hours exactly as given, no rounding.",
                "quarter_down": "Round the hours down to the quarter hour first.",
                "quarter_nearest": "Round the hours to the nearest quarter hour first.",
                "half_down": "Round the hours down to the half hour first.",
            },
        ),
        Fact(
            "output",
            "return_format",
            options=("total", "tuple", "dict"),
            default="total",
            keywords=("return", "tuple", "dictionary", "split", "output"),
            answer={
                "total": "Return just the total pay, rounded to cents.",
                "tuple": "Return a tuple (regular_pay, overtime_pay) rounded to cents, where "
                "overtime pay includes any double time.",
                "dict": "Return a dict with keys 'regular', 'overtime' and 'total', rounded to "
                "cents; overtime includes any double time.",
            },
        ),
    )

    def body(self, v: dict[str, Any]) -> str:
        t, d = v["threshold"], v["double_after"]
        hours = {
            "exact": "max(hours, 0)",
            "quarter_down": "math.floor(max(hours, 0) * 4) / 4",
            "quarter_nearest": "math.floor(max(hours, 0) * 4 + 0.5) / 4",
            "half_down": "math.floor(max(hours, 0) * 2) / 2",
        }[v["hours_rounding"]]
        top = "h" if d is None else f"min(h, {d})"
        dbl = "" if d is None else f" + max(0, h - {d}) * hourly_rate * 2"
        out = {
            "total": "round(regular + overtime, 2)",
            "tuple": "(round(regular, 2), round(overtime, 2))",
            "dict": '{"regular": round(regular, 2), "overtime": round(overtime, 2), '
            '"total": round(regular + overtime, 2)}',
        }
        return f"""
        import math
        h = {hours}
        regular = min(h, {t}) * hourly_rate
        overtime = max(0, {top} - {t}) * hourly_rate * {v["multiplier"]}{dbl}
        return {out[v["output"]]}
        """

    def inputs(self, v: dict[str, Any], rng: random.Random) -> list[tuple[Any, ...]]:
        rates = (15.0, 18.5, 22.75, 31.2, 45.0)
        cases = [(round(rng.uniform(20, 70), 2), rng.choice(rates)) for _ in range(20)]
        t = v["threshold"]
        fixed = [t, t + 0.1, t + 2.6, 38.0, 42.3, 46.85, 52.4, 63.7, 59.9, 36.2, 0.0, -3.0]
        return cases + [(h, rng.choice(rates)) for h in fixed]


FAMILIES: tuple[Family, ...] = (
    TipSplit(),
    LoanPayment(),
    IncomeTax(),
    CartDiscount(),
    CurrencyExchange(),
    OvertimePay(),
)
