"""A synthetic buffer where one kind of turn leads to success and another to failure."""

from __future__ import annotations

import random

from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn

GOOD_TURNS = (
    "What should the function return when the list is empty?",
    "Which threshold should I use for the discount?",
    "Should the result be rounded to 2 decimal places?",
)
BAD_TURNS = (
    "Hello! Nice weather today, isn't it?",
    "I like turtles and long walks.",
    "Let me tell you a story about my cat.",
)
ANSWER = "I WANT TO ANSWER:\ndef f(x):\n    return x"


def dialogue(task: int, first: str, rng: random.Random) -> Trajectory:
    """Two turns: ``first`` (good or bad kind), then the same answer; success iff good."""
    request = (
        f"I need function number {task} that handles {rng.choice(['prices', 'scores', 'names'])}."
    )
    reply = rng.choice(["Sure.", "Fine.", "OK, go on."])
    context_1 = [{"role": "user", "content": request}]
    context_2 = [
        *context_1,
        {"role": "assistant", "content": first},
        {"role": "user", "content": reply},
    ]
    good = first in GOOD_TURNS
    turns = [
        Turn(messages=context_1, action=first),
        Turn(messages=context_2, action=ANSWER, reward=float(good), done=True),
    ]
    return Trajectory(
        task_id=f"synthetic-{task}",
        turns=turns,
        messages=[*context_2, {"role": "assistant", "content": ANSWER}],
        reward=float(good),
        success=good,
        answer=ANSWER,
        reference={"ground_truth": f"def f(x):\n    return x + {task}"},
    )


def synthetic_buffer(num_tasks: int, seed: int = 0) -> TrajectoryBuffer:
    """Per task: one good-kind and two bad-kind trajectories (the paper's k=3)."""
    rng = random.Random(seed)
    buffer = TrajectoryBuffer()
    for task in range(num_tasks):
        buffer.append(dialogue(task, rng.choice(GOOD_TURNS), rng))
        for bad in rng.sample(BAD_TURNS, 2):
            buffer.append(dialogue(task, bad, rng))
    return buffer
