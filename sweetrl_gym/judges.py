"""Pairwise judges and the Frontend win rate against a reference agent.

The paper's second Frontend metric is the win rate against a reference agent (GPT-4o):
for each task a judge sees the target page and the two agents' final pages and says
which is closer to the target. Two judges:

* :class:`SimilarityJudge` — offline: compares each page's similarity to the target
  (:func:`~sweetrl_gym.similarity.perceptual_similarity` by default, or CLIP).
* :class:`OpenAIVisionJudge` — a VLM at an OpenAI-compatible endpoint, asked in both
  orders to cancel position bias.

:func:`win_rate` renders the pages (a missing page is a black image, as in the official
scorer), asks the judge once per task and returns the win rate with a bootstrap
confidence interval::

    result = win_rate(SimilarityJudge(), pages, reference_pages, targets)
    result["win_rate"], result["ci_low"], result["ci_high"]
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from PIL import Image

from sweetrl_gym.actions import extract_html
from sweetrl_gym.lm import (
    ChatAPIError,
    ChatClient,
    check_client,
    check_int,
    check_temperature,
)

__all__ = [
    "JUDGE_PROMPT",
    "JudgeError",
    "OpenAIVisionJudge",
    "PairwiseJudge",
    "SimilarityJudge",
    "parse_verdict",
    "win_rate",
    "win_rate_from_buffers",
]

logger = logging.getLogger(__name__)

Render = Callable[[str], Image.Image]

JUDGE_PROMPT = """\
You judge how well web pages reproduce a target design. You are shown the target page, \
then two candidate pages, numbered 1 and 2. Decide which candidate looks closer to the \
target: overall layout, sections and their order, colours, sizes, and text. Answer with \
exactly one of: 1, 2, tie.
"""
"""The VLM judge's instructions (the answer must be ``1``, ``2`` or ``tie``)."""

_VERDICTS = {"1": 1.0, "2": 0.0, "tie": 0.5}
_TIE_WORDS = ("tie", "equally", "equal", "same", "neither")


class JudgeError(RuntimeError):
    """A judge could not give a verdict (e.g. its endpoint failed)."""


@runtime_checkable
class PairwiseJudge(Protocol):
    """Says which of two pages is closer to a target page.

    Attributes:
        name: Identifies the judge and its settings.

    """

    name: str

    def compare(self, target: Image.Image, first: Image.Image, second: Image.Image) -> float:
        """Return the probability that ``first`` is closer to ``target`` than ``second``.

        1.0: ``first`` wins; 0.0: ``second`` wins; 0.5: a tie.
        """
        ...


class SimilarityJudge:
    """Offline judge: the page more similar to the target wins.

    Args:
        similarity: ``"perceptual"``, ``"clip"`` (needs ``clip_model``), a function of
            two images, or ``None``: CLIP when ``clip_model`` is given, else perceptual
            (see :func:`~sweetrl_gym.similarity.make_similarity`).
        clip_model: A local CLIP checkpoint for ``similarity="clip"``.
        tie_margin: Similarities closer than this are a tie.

    Raises:
        ValueError: If an argument is invalid.

    """

    def __init__(
        self,
        similarity: str | Callable[[Image.Image, Image.Image], float] | None = None,
        *,
        clip_model: str | Path | None = None,
        tie_margin: float = 0.005,
    ):
        from sweetrl_gym.similarity import make_similarity

        if isinstance(tie_margin, bool) or not isinstance(tie_margin, (int, float)):
            raise ValueError(f"tie_margin must be a number, got {tie_margin!r}")
        if not math.isfinite(tie_margin) or tie_margin < 0:
            raise ValueError(f"tie_margin must be a finite number >= 0, got {tie_margin!r}")
        self.similarity = make_similarity(similarity, clip_model=clip_model)
        self.tie_margin = float(tie_margin)
        if similarity is None:
            label = "perceptual" if clip_model is None else "clip"
        else:
            label = similarity if isinstance(similarity, str) else _callable_name(similarity)
        self.name = f"similarity:{label}(tie_margin={self.tie_margin:g})"

    def __repr__(self) -> str:
        return f"SimilarityJudge({self.name!r})"

    def compare(self, target: Image.Image, first: Image.Image, second: Image.Image) -> float:
        """Return 1.0, 0.0 or 0.5 (tie) from the two pages' similarity to the target.

        Raises:
            ValueError: If the similarity is not a finite number.

        """
        a = _finite(self.similarity(first, target), "similarity")
        b = _finite(self.similarity(second, target), "similarity")
        if abs(a - b) <= self.tie_margin:
            return 0.5
        return 1.0 if a > b else 0.0


class OpenAIVisionJudge:
    """A VLM judge at an OpenAI-compatible endpoint that accepts images.

    Each comparison is asked twice, with the candidates in both orders, and the two
    verdicts are averaged: a judge that always prefers the first image gives a tie.
    An answer that is not ``1``, ``2`` or ``tie`` counts as a tie for that order, with
    a warning.

    Args:
        client: The endpoint (:class:`~sweetrl_gym.lm.chat_api.ChatClient`: server, model,
            key, timeouts and retries), built once and shared by agents, simulators and
            judges.
        prompt: The instructions (see :data:`JUDGE_PROMPT`).
        temperature: Sampling temperature.
        max_tokens: Most tokens per verdict.
        max_image_width: Screenshots are scaled down to at most this width...
        max_image_height: ...and this height before they are sent.

    Raises:
        ValueError: If an argument is invalid.

    """

    def __init__(
        self,
        client: ChatClient,
        *,
        prompt: str = JUDGE_PROMPT,
        temperature: float = 0.0,
        max_tokens: int = 32,
        max_image_width: int = 640,
        max_image_height: int = 2400,
    ):
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"prompt must be a non-empty string, got {prompt!r:.80}")
        check_temperature(temperature)
        check_int("max_tokens", max_tokens)
        check_int("max_image_width", max_image_width)
        check_int("max_image_height", max_image_height)
        self.client = check_client(client)
        self.prompt = prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_image_size = (max_image_width, max_image_height)
        prompt_hash = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]
        self.name = (
            f"openai-vision-judge:{self.client.model}(prompt={prompt_hash},temperature={temperature:g},"
            f"image={max_image_width}x{max_image_height})"
        )

    def __repr__(self) -> str:
        return f"OpenAIVisionJudge({self.client.base_url!r}, {self.name!r})"

    def compare(self, target: Image.Image, first: Image.Image, second: Image.Image) -> float:
        """Return the probability that ``first`` is closer to ``target``, in {0, .25, .5, .75, 1}.

        Raises:
            JudgeError: If the endpoint fails (after the client's retries).
            TypeError, ValueError: If an argument is not a non-empty PIL image.

        """
        from sweetrl_gym.simulators.openai_vision import image_data_url

        width, height = self.max_image_size
        target_url, first_url, second_url = (
            image_data_url(image, max_width=width, max_height=height)
            for image in (target, first, second)
        )
        in_order = self._ask(target_url, first_url, second_url)
        swapped = self._ask(target_url, second_url, first_url)
        return (in_order + (1.0 - swapped)) / 2.0

    def _ask(self, target_url: str, one_url: str, two_url: str) -> float:
        content = [
            {"type": "text", "text": "Target page:"},
            {"type": "image_url", "image_url": {"url": target_url}},
            {"type": "text", "text": "Candidate 1:"},
            {"type": "image_url", "image_url": {"url": one_url}},
            {"type": "text", "text": "Candidate 2:"},
            {"type": "image_url", "image_url": {"url": two_url}},
            {
                "type": "text",
                "text": "Which candidate is closer to the target? Answer 1, 2 or tie.",
            },
        ]
        chat = [{"role": "system", "content": self.prompt}, {"role": "user", "content": content}]
        try:
            answer = self.client.complete(
                chat, temperature=self.temperature, max_tokens=self.max_tokens
            )
        except ChatAPIError as err:
            raise JudgeError(f"judge {self.name} could not answer: {err}") from err
        verdict = parse_verdict(answer)
        if verdict is None:
            logger.warning("judge %s gave no verdict (%r): counted as a tie", self.name, answer)
            return 0.5
        return verdict


def parse_verdict(answer: str) -> float | None:
    """Read a judge's answer: 1.0 (candidate 1), 0.0 (candidate 2), 0.5 (tie) or ``None``.

    Accepts ``"1"``, ``"Candidate 2."``, ``"**tie**"``, ``"Answer: 2"`` and the like;
    an answer naming both candidates without a clear final verdict is ``None``.
    """
    if not isinstance(answer, str):
        return None
    text = re.sub(r"[*_`\"'#]", "", answer).strip().lower()
    text = text.rstrip(".! ")
    if text in _VERDICTS:
        return _VERDICTS[text]
    stated = re.search(r"(?:answer|verdict)\s*(?:is|:)?\s*(?:candidate\s*)?\b(1|2|tie)\b", text)
    if stated:
        return _VERDICTS[stated.group(1)]
    numbers = set(re.findall(r"\b[12]\b", text))
    ties = any(re.search(rf"\b{word}\b", text) for word in _TIE_WORDS)
    if len(numbers) == 1 and not ties:
        return _VERDICTS[numbers.pop()]
    if not numbers and ties:
        return 0.5
    return None


def win_rate(
    judge: PairwiseJudge,
    pages: Mapping[str, str | None],
    reference_pages: Mapping[str, str | None],
    targets: Mapping[str, str],
    *,
    render: Render | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    num_resamples: int = 2000,
) -> dict[str, Any]:
    """Win rate of ``pages`` against ``reference_pages``, judged per task.

    Every distinct HTML is rendered once. A missing page (``None``) or one that does not
    render is a black image the size of the target, as in the official scorer.

    Args:
        judge: The judge (see :class:`PairwiseJudge`).
        pages: Task id -> the evaluated agent's final HTML (or ``None``).
        reference_pages: Task id -> the reference agent's final HTML (or ``None``).
        targets: Task id -> the target page's HTML. The tasks compared are those of
            ``targets`` present in both ``pages`` and ``reference_pages``, in order.
        render: HTML -> screenshot (default: :func:`sweetrl_gym.render.render_html`).
        confidence: Level of the bootstrap interval (percentile, over tasks).
        seed: Seed of the bootstrap.
        num_resamples: Bootstrap resamples.

    Returns:
        ``win_rate`` (mean verdict: ties count half), ``ci_low``, ``ci_high``, ``wins``,
        ``ties`` and ``losses`` (verdicts above, at, below 0.5), ``num_tasks``,
        ``scores`` (task id -> verdict) and ``judge`` (its name).

    Raises:
        ValueError: If no task is in all three mappings, a target is not HTML, a verdict
            is not in [0, 1], or an argument is out of range.

    """
    if not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(num_resamples, bool) or not isinstance(num_resamples, int) or num_resamples < 1:
        raise ValueError(f"num_resamples must be a positive int, got {num_resamples!r}")
    task_ids = [tid for tid in targets if tid in pages and tid in reference_pages]
    if not task_ids:
        raise ValueError(
            f"no task is in targets, pages and reference_pages ({len(targets)}, "
            f"{len(pages)} and {len(reference_pages)} task ids)"
        )
    screenshots = _Screenshots(render)
    scores: dict[str, float] = {}
    for task_id in task_ids:
        target_html = targets[task_id]
        if not isinstance(target_html, str) or not target_html.strip():
            raise ValueError(f"target of task {task_id!r} is not HTML: {target_html!r:.80}")
        target = screenshots.target(target_html)
        first = screenshots.page(pages[task_id], target.size)
        second = screenshots.page(reference_pages[task_id], target.size)
        verdict = _finite(judge.compare(target, first, second), "verdict")
        if not 0.0 <= verdict <= 1.0:
            raise ValueError(f"judge {judge.name} returned {verdict}, outside [0, 1]")
        scores[task_id] = verdict
    values = np.array(list(scores.values()))
    low, high = _bootstrap_interval(values, confidence, seed, num_resamples)
    return {
        "win_rate": float(values.mean()),
        "ci_low": low,
        "ci_high": high,
        "wins": int((values > 0.5).sum()),
        "ties": int((values == 0.5).sum()),
        "losses": int((values < 0.5).sum()),
        "num_tasks": len(values),
        "scores": scores,
        "judge": judge.name,
    }


def win_rate_from_buffers(
    judge: PairwiseJudge,
    buffer: Any,
    reference_buffer: Any,
    *,
    render: Render | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    num_resamples: int = 2000,
) -> dict[str, Any]:
    """:func:`win_rate` of one agent's Frontend episodes against a reference agent's.

    Each buffer's final page for a task is ``extract_html(trajectory.answer)`` of its
    first trajectory of that task; the target is ``trajectory.reference["ground_truth"]``.

    Args:
        judge: The judge.
        buffer: A :class:`~sweetrl_gym.trajectory.TrajectoryBuffer` of the evaluated agent.
        reference_buffer: The reference agent's buffer.
        render: HTML -> screenshot (default: :func:`sweetrl_gym.render.render_html`).
        confidence: Level of the bootstrap interval.
        seed: Seed of the bootstrap.
        num_resamples: Bootstrap resamples.

    Raises:
        ValueError: If the buffers share no task, a shared task has no ground truth,
            or the two buffers disagree on a task's ground truth.

    """
    mine, theirs = _first_per_task(buffer), _first_per_task(reference_buffer)
    targets: dict[str, str] = {}
    for task_id, trajectory in mine.items():
        if task_id not in theirs:
            continue
        truths = {
            t.reference.get("ground_truth")
            for t in (trajectory, theirs[task_id])
            if isinstance(t.reference, Mapping) and t.reference.get("ground_truth") is not None
        }
        if len(truths) != 1:
            problem = "no ground truth" if not truths else "two different ground truths"
            raise ValueError(f"task {task_id!r} has {problem} in its trajectories' reference")
        targets[task_id] = truths.pop()
    return win_rate(
        judge,
        {task_id: extract_html(t.answer or "") for task_id, t in mine.items()},
        {task_id: extract_html(t.answer or "") for task_id, t in theirs.items()},
        targets,
        render=render,
        confidence=confidence,
        seed=seed,
        num_resamples=num_resamples,
    )


class _Screenshots:
    """Renders each distinct HTML once; failed or missing pages are black."""

    def __init__(self, render: Render | None):
        self._render = render
        self._cache: dict[str, Image.Image | None] = {}

    def _shot(self, html: str) -> Image.Image | None:
        key = hashlib.sha256(html.encode("utf-8")).hexdigest()
        if key not in self._cache:
            from sweetrl_gym.render import RenderError

            if self._render is None:
                from sweetrl_gym.render import render_html

                self._render = render_html
            try:
                self._cache[key] = self._render(html)
            except RenderError as err:
                logger.warning("a page does not render (%s): it counts as a black image", err)
                self._cache[key] = None
        return self._cache[key]

    def target(self, html: str) -> Image.Image:
        shot = self._shot(html)
        if shot is None:
            raise ValueError("a target page does not render; its task cannot be judged")
        return shot

    def page(self, html: str | None, size: tuple[int, int]) -> Image.Image:
        shot = None if html is None else self._shot(html)
        return shot if shot is not None else Image.new("RGB", size, (0, 0, 0))


def _first_per_task(buffer: Any) -> dict[str, Any]:
    first: dict[str, Any] = {}
    for trajectory in buffer:
        first.setdefault(trajectory.task_id, trajectory)
    return first


def _bootstrap_interval(
    values: np.ndarray, confidence: float, seed: int, num_resamples: int
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, len(values), size=(num_resamples, len(values)))
    means = values[resamples].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _finite(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r:.80}") from None
    if not math.isfinite(number):
        raise ValueError(f"{what} must be finite, got {number}")
    return number


def _callable_name(function: Any) -> str:
    return str(getattr(function, "name", None) or getattr(function, "__name__", "custom"))
