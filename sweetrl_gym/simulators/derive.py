"""Hidden facts derived from a reference function, for tasks without structured facts.

Official ColBench records carry only the reference code. A human who wrote that code
knows its signature, its constants and its branches; this module turns those into
one-sentence facts the offline simulator can state when asked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from sweetrl_gym.tasks.types import HiddenFact

__all__ = ["facts_from_reference"]

_MAX_FACTS = 12
_MAX_EXPR = 90
_CALL_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(")


def _code(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= _MAX_EXPR else text[: _MAX_EXPR - 3] + "..."


def _names(node: ast.AST) -> list[str]:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.append(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.append(sub.attr)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, (str, int, float)):
            out.append(str(sub.value))
    return out


def _target_function(tree: ast.Module, test_cases: dict[str, str] | None) -> ast.FunctionDef | None:
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return None
    called = set()
    for expr in (test_cases or {}).values():
        match = _CALL_NAME.match(expr)
        if match:
            called.add(match.group(1))
    for fn in functions:
        if fn.name in called:
            return fn
    return functions[-1]  # helpers usually come first


def _signature(fn: ast.FunctionDef) -> HiddenFact:
    params = _code(fn.args) if fn.args.args or fn.args.vararg or fn.args.kwarg else ""
    return HiddenFact(
        key="signature",
        topic="signature",
        answer=f"The function should be called `{fn.name}` and take `({params})` in that order.",
        keywords=(),
        value={"name": fn.name, "params": [a.arg for a in fn.args.args]},
    )


def _branch_topic(test: ast.AST) -> str:
    for sub in ast.walk(test):
        if isinstance(sub, ast.Compare):
            for op, right in zip(sub.ops, sub.comparators):
                if isinstance(op, (ast.Is, ast.IsNot)) and _is_const(right, None):
                    return "edge_case"
                if _is_const(right, 0) or _is_const(right, "") or _is_const(right, []):
                    return "edge_case"
            if any(
                isinstance(c, ast.Constant) and isinstance(c.value, (int, float))
                for c in sub.comparators
            ):
                return "threshold"
        if isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not):
            return "edge_case"
    return "rule"


def _is_const(node: ast.AST, value: object) -> bool:
    if isinstance(node, ast.List):
        return value == [] and not node.elts
    return (
        isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value
    )


def _branch_facts(fn: ast.FunctionDef) -> Iterator[HiddenFact]:
    for node in ast.walk(fn):
        if not isinstance(node, (ast.If, ast.While, ast.IfExp)):
            continue
        condition = _code(node.test)
        first = node.body[0] if isinstance(node, (ast.If, ast.While)) else None
        if isinstance(node, ast.IfExp):
            effect = f"the result is `{_code(node.body)}`, otherwise `{_code(node.orelse)}`"
        elif isinstance(first, ast.Return) and first.value is not None:
            effect = f"it returns `{_code(first.value)}`"
        elif isinstance(first, (ast.Assign, ast.AugAssign)):
            effect = f"it does `{_code(first)}`"
        else:
            effect = "it is handled as a special case"
        keywords = _names(node.test) + (_names(first) if first is not None else [])
        yield HiddenFact(
            key=f"branch_{node.lineno}_{node.col_offset}",
            topic=_branch_topic(node.test),
            answer=f"When `{condition}`, {effect}.",
            keywords=tuple(keywords),
        )


def _call_facts(fn: ast.FunctionDef) -> Iterator[HiddenFact]:
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name == "round":
            digits = _code(node.args[1]) if len(node.args) > 1 else "0"
            what = _code(node.args[0]) if node.args else "the result"
            yield HiddenFact(
                key=f"round_{node.lineno}_{node.col_offset}",
                topic="rounding",
                answer=f"Round `{what}` to {digits} decimal places.",
                keywords=tuple(_names(node)),
            )
        elif name in ("sorted", "sort"):
            reverse = any(k.arg == "reverse" and _is_const(k.value, True) for k in node.keywords)
            key = next((k.value for k in node.keywords if k.arg == "key"), None)
            by = f" by `{_code(key)}`" if key is not None else ""
            yield HiddenFact(
                key=f"sort_{node.lineno}_{node.col_offset}",
                topic="ordering",
                answer=f"Sort {'descending' if reverse else 'ascending'}{by}.",
                keywords=tuple(_names(node)),
            )
        elif name in ("lower", "upper", "casefold", "title", "capitalize"):
            target = node.func.value if isinstance(node.func, ast.Attribute) else None
            what = _code(target) if target is not None else "the text"
            yield HiddenFact(
                key=f"case_{node.lineno}_{node.col_offset}",
                topic="case",
                answer=f"Use `.{name}()` on `{what}`.",
                keywords=tuple(_names(node)),
            )


def _constant_facts(fn: ast.FunctionDef) -> Iterator[HiddenFact]:
    """Rates and amounts: arithmetic that involves a numeric literal, outside conditions."""
    in_tests = {
        id(n)
        for node in ast.walk(fn)
        if isinstance(node, (ast.If, ast.While, ast.IfExp))
        for n in ast.walk(node.test)
    }
    for node in ast.walk(fn):
        if not isinstance(node, ast.BinOp) or id(node) in in_tests:
            continue
        sides = (node.left, node.right)
        if any(_is_number(side) and side.value not in (0, 1) for side in sides):
            yield HiddenFact(
                key=f"calc_{node.lineno}_{node.col_offset}",
                topic="rate",
                answer=f"It computes `{_code(node)}`.",
                keywords=tuple(_names(node)),
            )


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float))


def _return_fact(fn: ast.FunctionDef) -> HiddenFact | None:
    kinds = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            kind = {
                ast.Dict: "a dictionary",
                ast.DictComp: "a dictionary",
                ast.List: "a list",
                ast.ListComp: "a list",
                ast.Tuple: "a tuple",
                ast.JoinedStr: "a formatted string",
                ast.Set: "a set",
                ast.Compare: "a boolean",
                ast.BoolOp: "a boolean",
            }.get(type(value))
            if isinstance(value, ast.Constant):
                kind = {bool: "a boolean", str: "a string", int: "a number", float: "a number"}.get(
                    type(value.value)
                )
            kinds.add(kind)
    if len(kinds) != 1 or None in kinds:
        return None
    (kind,) = kinds
    return HiddenFact(
        key="return",
        topic="return_format",
        answer=f"It should return {kind}.",
        keywords=("return",),
    )


def facts_from_reference(
    code: str, test_cases: dict[str, str] | None = None
) -> tuple[HiddenFact, ...]:
    """Derive the hidden facts a reference function implies.

    Args:
        code: The reference source.
        test_cases: The task's tests; the function they call is the one described.

    Returns:
        The signature first, then the return kind, branches, rounding/sorting/case
        calls and arithmetic constants — at most 12 facts. Empty when the code does
        not parse.

    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return ()
    fn = _target_function(tree, test_cases)
    if fn is None:
        return ()
    facts: list[HiddenFact] = [_signature(fn)]
    returned = _return_fact(fn)
    if returned is not None:
        facts.append(returned)
    for fact in (*_branch_facts(fn), *_call_facts(fn), *_constant_facts(fn)):
        if all(fact.answer != f.answer for f in facts):
            facts.append(fact)
    return tuple(facts[:_MAX_FACTS])
