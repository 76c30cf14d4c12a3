import random

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from agents.scripted import question_for
from sweetrl_gym.simulators import RuleBasedSimulator
from sweetrl_gym.tasks import BackendTask, HiddenFact
from sweetrl_gym.tasks.families import FAMILIES
from sweetrl_gym.tasks.generator import draft_task

SIM = RuleBasedSimulator()

TASK = BackendTask(
    task_id="fee",
    problem_description="I need a function for late fees.",
    ground_truth="def late_fee(days, balance):\n    return 0\n",
    test_cases={"t": "late_fee(1, 2)"},
    facts=(
        HiddenFact(
            "signature",
            "signature",
            "The function should be called `late_fee` and take `(days, balance)` in that order.",
        ),
        HiddenFact(
            "grace", "threshold", "The first 3 days late are free.", ("grace", "period", "free")
        ),
        HiddenFact(
            "rate", "rate", "Each day late costs 1% of the balance.", ("daily", "day", "percent")
        ),
        HiddenFact(
            "rounding", "rounding", "Round to cents.", ("round", "cents", "decimal"), matters=False
        ),
    ),
)


def ask(question, history=()):
    messages = [{"role": "user", "content": TASK.problem_description}, *history]
    return SIM.reply(TASK, [*messages, {"role": "assistant", "content": question}])


def test_implements_the_protocol():
    # The environment plays it as the human: its reply is the agent's next observation.
    # (isinstance on the runtime-checkable protocol would pass for any object with a
    # ``name`` and a ``reply``.)
    assert SIM.name == "rule-based-v2(max_sentences=2)"  # what caches key its replies by
    env = gym.make("ColBench-Backend-v0", tasks=[TASK], simulator=SIM)
    env.reset(options={"task_index": 0})
    observation, reward, terminated, truncated, _ = env.step("Is there a grace period?")
    assert observation == "The first 3 days late are free." == ask("Is there a grace period?")
    assert not (terminated or truncated) and reward == 0.0


def test_answers_what_is_asked_and_nothing_else():
    assert ask("What should the function be called?") == TASK.facts[0].answer
    assert ask("Is there a grace period?") == "The first 3 days late are free."
    reply = ask("Should I round the result? And what is the daily rate?")
    assert reply == "Round to cents. Each day late costs 1% of the balance."


def test_at_most_two_facts_per_reply():
    reply = ask("What's the name? Is there a grace period? What's the daily rate? Rounding?")
    assert reply.count(".") - reply.count("`.") <= 3  # two sentences (dots in names aside)
    assert sum(f.answer in reply for f in TASK.facts) == 2


def test_unknown_questions_and_non_questions():
    assert ask("What is your favourite colour?") == "I don't know about that."
    assert "final answer" in ask("Here is my plan")
    partial = ask("Is there a grace period? What colour is the sky?")
    assert partial == "The first 3 days late are free. I don't know about the rest."


def test_generic_request_reveals_one_untold_fact_most_important_first():
    first = ask("Could you give me more details?")
    assert first in {f.answer for f in TASK.facts if f.matters}
    history = [
        {"role": "assistant", "content": "More details?"},
        {"role": "user", "content": first},
    ]
    second = ask("Anything else I should know?", history)
    assert second != first and second in {f.answer for f in TASK.facts}


def test_deterministic():
    assert ask("Any rounding?") == ask("Any rounding?")
    assert RuleBasedSimulator().name == SIM.name


def test_max_sentences_validated():
    with pytest.raises(ValueError):
        RuleBasedSimulator(max_sentences=0)
    one = RuleBasedSimulator(max_sentences=1)
    messages = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "Grace period? Daily rate?"},
    ]
    assert one.reply(TASK, messages) == "The first 3 days late are free."


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_question_about_each_fact_gets_that_fact(family):
    """Across every family: asking about a fact (its topic and keywords) retrieves it."""
    rng = random.Random(family.name)
    drafts = [d for d in (draft_task(family, rng) for _ in range(8)) if d is not None]
    assert drafts
    for draft in drafts:
        task = draft.to_task("x")
        for fact in draft.facts:
            messages = [
                {"role": "user", "content": draft.description},
                {"role": "assistant", "content": question_for(fact)},
            ]
            reply = SIM.reply(task, messages)
            assert fact.answer in reply, (fact.key, reply)
            assert sum(other.answer in reply for other in draft.facts) <= 2


# -- Code in the agent's message asks nothing -------------------------------------------

CODE = "def late_fee(days, balance):\n    grace = 3  # grace period free\n    daily = 0.01\n"
FACT_ANSWERS = {f.answer for f in TASK.facts}


def states_no_fact(reply):
    return not any(answer in reply for answer in FACT_ANSWERS)


def test_the_name_says_replies_changed():
    assert SIM.name == "rule-based-v2(max_sentences=2)"


@pytest.mark.parametrize(
    "message",
    [
        f"```python\n{CODE}```",  # fenced, with a language tag
        f"```\n{CODE}```",  # fenced, no tag
        f"Here is my draft:\n```py\n{CODE}",  # a fence never closed
        f"Draft: ~~~\n{CODE}~~~",  # a tilde fence, opened mid-line
        f"Here is my draft:\n{CODE}",  # unfenced def with its body
        "Draft: `round(days * daily_rate, 2)` then `grace_period = 3`.",  # code-like spans
        "import grace\nfrom rounding import cents\nreturn daily_percent",  # statements
    ],
)
def test_keywords_only_inside_code_state_no_fact(message):
    reply = ask(message)
    assert states_no_fact(reply), reply
    assert reply == "Please ask me about anything that is unclear, or give me your final answer."


def test_a_question_only_inside_code_is_not_answered():
    reply = ask("```python\n# Is there a grace period? What is the daily rate?\n```")
    assert states_no_fact(reply)


def test_prose_questions_next_to_code_are_answered_alone():
    fenced = f"Is there a grace period?\n```python\n{CODE.replace('grace', 'rounding')}```"
    assert ask(fenced) == "The first 3 days late are free."
    unfenced = f"Here is a draft:\n{CODE}\nShould I round the result?"
    assert ask(unfenced) == ask("Here is a draft:\nShould I round the result?")
    assert ask(unfenced).startswith("Round to cents.") and "free" not in ask(unfenced)
    both = f"```\n{CODE}```\nIs there a grace period? And what about colours?"
    assert ask(both) == "The first 3 days late are free. I don't know about the rest."


def test_code_with_an_unanswerable_prose_question_gets_i_dont_know():
    assert ask(f"What is your favourite colour?\n```\n{CODE}```") == "I don't know about that."


def test_prose_is_answered_as_before():
    # A backticked name, a line opening with "return" that is a question, plain prose.
    assert ask("Should it be called `late_fee`?") == TASK.facts[0].answer
    assert ask("return the result rounded?") == "Round to cents."
    assert ask("Is there a grace period?") == "The first 3 days late are free."
