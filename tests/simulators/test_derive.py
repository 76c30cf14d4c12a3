from sweetrl_gym.simulators import RuleBasedSimulator, facts_from_reference
from sweetrl_gym.tasks import BackendTask

REFERENCE = """
import math

def _helper(x):
    return x

def grade(score, curve=0):
    if not score:
        return "none"
    if score + curve >= 90:
        return "A"
    total = round(score * 1.05, 1)
    names = sorted(["b", "a"], reverse=True)
    return names[0].upper() + str(total)
"""


def test_signature_branches_constants_and_calls():
    facts = facts_from_reference(REFERENCE, {"t": "grade(95)"})
    answers = [f.answer for f in facts]
    assert (
        answers[0]
        == "The function should be called `grade` and take `(score, curve=0)` in that order."
    )
    topics = {f.topic for f in facts}
    assert {"signature", "edge_case", "threshold", "rounding", "ordering", "case", "rate"} <= topics
    assert any("`score + curve >= 90`" in a and "'A'" in a for a in answers)
    assert any(a == "Round `score * 1.05` to 1 decimal places." for a in answers)
    assert len(facts) <= 12


def test_unparseable_reference_gives_no_facts():
    assert facts_from_reference("def broken(:") == ()
    assert facts_from_reference("x = 1") == ()


def test_simulator_answers_official_tasks_from_derived_facts():
    task = BackendTask("o", "Write a grader.", REFERENCE, {"t": "grade(95)"})
    sim = RuleBasedSimulator()

    def ask(q):
        return sim.reply(
            task, [{"role": "user", "content": "x"}, {"role": "assistant", "content": q}]
        )

    assert "`grade`" in ask("What should the function be called?")
    assert "90" in ask("What score threshold gives an A?")
    assert "decimal" in ask("How should I round the total?")
