"""ColBench Frontend Design as a Gymnasium environment."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from sweetrl_gym.actions import ParsedAction, extract_html
from sweetrl_gym.envs.agent_prompts import FRONTEND_AGENT_PROMPT
from sweetrl_gym.envs.collaborative import CollaborativeEnv, check_max_turns
from sweetrl_gym.simulators import PageSketch, Simulator, SimulatorError

__all__ = ["ANSWERS", "ColBenchFrontendEnv"]

Similarity = Callable[[Image.Image, Image.Image], float]

ANSWERS = ("final_message", "last_page")
"""Which page an episode is scored on: the final message's, or the last one sent."""


class ColBenchFrontendEnv(CollaborativeEnv):
    """An agent collaborates with a simulated human to design a web page.

    The episode starts with the human's vague request. Each agent message may carry one
    ``<html>…</html>`` page: it is rendered in a real headless browser, and the human,
    who has a target design in mind, answers with the most outstanding differences
    between the two pages. ``I WANT TO ANSWER:`` followed by a page ends the episode
    (after ``max_turns`` messages the last one is the answer); the final reward is the
    visual similarity of the answer's page to the target (every other step: 0). Which
    page that is, ``answer`` says: with ``"final_message"`` (the default) the page of the
    final message; with ``"last_page"`` (the official environment's) the last page the
    agent sent in any turn, so a final message without a page keeps the one before. A
    missing page, or one that cannot be rendered, scores as a black image, as in the
    official scorer.

    ``info`` on every step: ``messages``, ``turn``, ``task_id``, ``screenshot`` (PNG
    path of the agent's latest rendered page, ``None`` before the first) and
    ``reference`` — the training-time information for critics: the target HTML
    (``ground_truth``), its ``screenshot`` path and its ``skeleton`` (the target's
    design as a :class:`~sweetrl_gym.simulators.PageSketch` page: sections, colours,
    columns, alignment and sizes in a few hundred tokens, for a critic whose context
    cannot hold the whole page). Never show ``reference`` to the
    acting policy. On the final step also: ``answer``, ``similarity``, ``success``
    (similarity at least ``success_threshold``), ``turn_limit_reached`` and, when the
    page failed to render, ``render_error``.

    Args:
        split: ``"train"`` or ``"test"``.
        tasks: ``None``/``"bundled"``, a path to the official JSONL, or a list of tasks.
        simulator: The simulated human (default:
            :class:`~sweetrl_gym.simulators.VisualDiffSimulator` on the same renderer).
        max_turns: Agent messages before the last one is taken as the answer.
        render_mode: ``"rgb_array"`` (``render()`` returns the latest page as an
            ``(H, W, 3)`` array), ``"ansi"`` or ``"human"`` (the dialogue).
        similarity: ``"perceptual"`` (the offline default), ``"clip"`` (the paper's
            metric; needs ``clip_model``) or a function of two images. ``None``: CLIP when
            ``clip_model`` is given, else perceptual.
        clip_model: CLIP weights for ``similarity="clip"``: a local folder (saved with
            ``save_pretrained``) or a hub id (``openai/clip-vit-base-patch32``), as
            ``from_pretrained`` reads it.
        renderer: The :class:`~sweetrl_gym.render.Renderer` (default: the shared one).
        screenshot_dir: Keep screenshots here (default: a temporary folder removed by
            :meth:`close`).
        max_reply_chars: The human's replies are cut to this length (official: 1,000).
        turn_notice: End each reply of the human with how many agent messages are left
            ("(2 messages left.)"; with one: that it is the final answer). Not official.
        success_threshold: Similarity that counts as a success.
        answer: ``"final_message"``: the final message's page is scored (a final
            message without one scores as a black image: the answer is what the agent
            says it is). ``"last_page"``: the last page sent in any turn, as the official
            environment keeps it (its ``answer`` is each page rendered, replaced by the
            next; a page that does not render replaces it with none).
        render_cache: Pages the renderer keeps rendered, at least (its cache only grows,
            as several environments share it). Each environment stepped at once needs
            about three (its target, the agent's latest page, the page before): with 32
            environments and the default 32, targets are evicted and rendered again on
            every step. A kept page holds its screenshot (about 6 MB at 1280 x 1500).
            ``None``: the renderer's own (32 for the shared one).

    Attributes:
        agent_prompt: :data:`~sweetrl_gym.envs.agent_prompts.FRONTEND_AGENT_PROMPT`, the
            system prompt rollouts hand to an agent without one of its own.

    """

    metadata = {"render_modes": ["rgb_array", "ansi", "human"], "render_fps": 4}
    agent_prompt: ClassVar[str | None] = FRONTEND_AGENT_PROMPT

    def __init__(
        self,
        split: str = "train",
        tasks: Any = None,
        simulator: Simulator | None = None,
        max_turns: int = 10,
        render_mode: str | None = None,
        similarity: str | Similarity | None = None,
        clip_model: str | Path | None = None,
        renderer: Any = None,
        screenshot_dir: str | Path | None = None,
        max_reply_chars: int = 1000,
        turn_notice: bool = False,
        success_threshold: float = 0.9,
        render_cache: int | None = None,
        answer: str = "final_message",
    ):
        from sweetrl_gym.render import default_renderer
        from sweetrl_gym.similarity import make_similarity
        from sweetrl_gym.simulators.visual import VisualDiffSimulator
        from sweetrl_gym.tasks import load_frontend_tasks

        check_max_turns(max_turns)  # before the tasks load and the browser starts
        if answer not in ANSWERS:
            raise ValueError(f"answer must be one of {ANSWERS}, got {answer!r}")
        if not 0.0 <= success_threshold <= 1.0:
            raise ValueError(f"success_threshold must be in [0, 1], got {success_threshold}")
        if render_cache is not None and (
            isinstance(render_cache, bool) or not isinstance(render_cache, int) or render_cache < 1
        ):
            raise ValueError(f"render_cache must be a positive int or None, got {render_cache!r}")
        self.similarity = make_similarity(similarity, clip_model=clip_model)
        tasks_ = load_frontend_tasks("bundled" if tasks is None else tasks, split=split)
        self.renderer = renderer if renderer is not None else default_renderer()
        if render_cache is not None:
            self.renderer.cache_size = max(self.renderer.cache_size, render_cache)
        super().__init__(
            tasks=tasks_,
            split=split,
            simulator=simulator if simulator is not None else VisualDiffSimulator(self.renderer),
            max_turns=max_turns,
            render_mode=render_mode,
            max_reply_chars=max_reply_chars,
            turn_notice=turn_notice,
        )
        self.success_threshold = success_threshold
        self.answer = answer
        self._own_dir = screenshot_dir is None
        self._screenshot_dir = Path(screenshot_dir) if screenshot_dir is not None else None
        self._target: Image.Image | None = None
        self._target_path: str | None = None
        self._target_skeleton: str | None = None
        self._latest: Image.Image | None = None
        self._latest_path: str | None = None
        self._latest_error: str | None = None

    @property
    def screenshot_dir(self) -> Path:
        """Where screenshots are written (created on first use)."""
        if self._screenshot_dir is None:
            self._screenshot_dir = Path(tempfile.mkdtemp(prefix="colbench-frontend-"))
        self._screenshot_dir.mkdir(parents=True, exist_ok=True)
        return self._screenshot_dir

    def _on_reset(self) -> None:
        from sweetrl_gym.render import RenderError

        try:
            page = self.renderer.render_page(self.task.ground_truth)
        except RenderError as err:
            raise SimulatorError(
                f"the target page of task {self.task.task_id!r} cannot be rendered: {err}"
            ) from err
        self._target = page.image
        self._target_path = str(self._save(page, "target"))
        self._target_skeleton = PageSketch.from_blocks(page.blocks).to_html()
        self._latest = self._latest_path = self._latest_error = None

    def _on_message(self, parsed: ParsedAction) -> None:
        from sweetrl_gym.render import RenderError

        last_page = self.answer == "last_page"
        # The official environment looks for the page in all that counts of the message.
        text = parsed.answer if parsed.is_answer and not last_page else parsed.message
        html = extract_html(text)
        if html is None:
            if not last_page and (parsed.is_answer or self._turn >= self.max_turns):
                # The final message has no page: it scores as a missing page.
                self._latest, self._latest_path, self._latest_error = None, None, None
            return
        try:
            page = self.renderer.render_page(html)
        except RenderError as err:
            self._latest, self._latest_path, self._latest_error = None, None, str(err)
            return
        self._latest, self._latest_error = page.image, None
        self._latest_path = str(self._save(page, "page"))

    def _save(self, page: Any, kind: str) -> Path:
        path = self.screenshot_dir / f"{kind}-{page.sha256[:20]}.png"
        return path if path.exists() else page.save(path)

    def _finish(self, answer: str) -> tuple[float, dict[str, Any]]:
        assert self._target is not None
        page = self._latest if self._latest is not None else _black_like(self._target)
        score = float(np.clip(self.similarity(page, self._target), 0.0, 1.0))
        details: dict[str, Any] = {
            "similarity": score,
            "success": score >= self.success_threshold,
        }
        if self._latest_error is not None:
            details["render_error"] = self._latest_error
        return score, details

    def _extra_info(self) -> dict[str, Any]:
        return {"screenshot": self._latest_path}

    def _info(self) -> dict[str, Any]:
        info = super()._info()
        info["reference"]["screenshot"] = self._target_path
        info["reference"]["skeleton"] = self._target_skeleton
        return info

    def render(self) -> Any:
        """Return the latest page as an RGB array (``"rgb_array"``), or the dialogue."""
        if self.render_mode != "rgb_array":
            return super().render()
        if self._latest is not None:
            return np.asarray(self._latest)
        # Before the agent's first page (or after one that did not render): a blank page.
        size = (self.renderer.width, self.renderer.height)
        return np.full((size[1], size[0], 3), 255, dtype=np.uint8)

    def close(self) -> None:
        """Remove the temporary screenshot folder (a given ``screenshot_dir`` is kept)."""
        if self._own_dir and self._screenshot_dir is not None:
            shutil.rmtree(self._screenshot_dir, ignore_errors=True)
            self._screenshot_dir = None
        super().close()


def _black_like(image: Image.Image) -> Image.Image:
    return Image.new("RGB", image.size, (0, 0, 0))
