import math

from sweetrl_gym.sandbox import RaisedException, outputs_match


def _raise(*names):
    return RaisedException(names)


def test_plain_equality_and_float_tolerance():
    assert outputs_match(3, 3)
    assert outputs_match(0.1 + 0.2, 0.3)
    assert not outputs_match(0.3, 0.31)
    assert outputs_match([1.0, (2, "a")], [1, (2, "a")])
    assert not outputs_match([1, 2], (1, 2))
    assert outputs_match({"a": 0.1 + 0.2}, {"a": 0.3})
    assert not outputs_match({"a": 1}, {"a": 1, "b": 2})
    assert outputs_match(math.nan, math.nan)
    assert not outputs_match("1", 1)


def test_none_reference_is_a_value_by_default_but_never_passes_officially():
    assert outputs_match(None, None)
    assert not outputs_match(None, None, scoring="official")


def test_official_rule_is_exact_equality():
    assert outputs_match(0.5, 0.5, scoring="official")
    assert not outputs_match(0.1 + 0.2, 0.3, scoring="official")


def test_exceptions_match_only_for_deliberate_errors():
    assert outputs_match(_raise("ValueError", "Exception"), _raise("ValueError", "Exception"))
    # a subclass of the expected type passes too
    assert outputs_match(_raise("LookupError"), _raise("KeyError", "LookupError"))
    # a broken reference (NameError) is never matched, even by another NameError
    assert not outputs_match(_raise("NameError"), _raise("NameError"))
    # custom exceptions (module-qualified) count
    assert outputs_match(_raise("answer.BadInput"), _raise("answer.BadInput"))
    assert not outputs_match(_raise("ValueError"), 3)
    assert not outputs_match(3, _raise("ValueError"))
    assert not outputs_match(_raise("ValueError"), _raise("ValueError"), scoring="official")
