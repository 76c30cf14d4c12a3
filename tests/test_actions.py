from sweetrl_gym.actions import parse_action, strip_code_fences


def test_question_is_not_an_answer():
    parsed = parse_action("What should it be called?")
    assert not parsed.is_answer and parsed.answer is None
    assert parsed.message == "What should it be called?"


def test_answer_marker_ends_and_takes_text_after():
    parsed = parse_action("Thanks!\nI WANT TO ANSWER:\ndef f():\n    return 1")
    assert parsed.is_answer
    assert parsed.answer == "def f():\n    return 1"


def test_only_text_after_first_output_counts():
    parsed = parse_action("THOUGHT: maybe I WANT TO ANSWER: no\nOUTPUT: Is it 5? OUTPUT: x")
    assert not parsed.is_answer
    assert parsed.message == "Is it 5? OUTPUT: x"
    parsed = parse_action("thinking OUTPUT: I WANT TO ANSWER: def g(): pass")
    assert parsed.answer == "def g(): pass"


def test_strip_code_fences_keeps_code():
    text = "```python\ndef f(x):\n    return x\n```"
    assert strip_code_fences(text) == "def f(x):\n    return x"
    assert strip_code_fences("def f(): pass") == "def f(): pass"
    assert strip_code_fences("``` py\nx = 1\n```\n") == "x = 1"
