"""The Frontend task's simulated human, played by a vision-language model.

The paper's human for the Frontend Design task is a VLM (Qwen2-VL-72B-Instruct) that
has the target design in mind. When the agent's message carries a page
(``<html>…</html>``), the page is rendered and the VLM sees the agent's screenshot
first and the target's second, and describes the most outstanding differences
concretely. Any OpenAI-compatible endpoint that accepts ``image_url`` content parts
works (vLLM serving Qwen2-VL, hosted APIs)::

    vlm = ChatClient("http://localhost:8000/v1", "Qwen/Qwen2-VL-72B-Instruct")
    sim = OpenAIVisionSimulator(vlm)
    env = gym.make("ColBench-Frontend-v0", simulator=sim)

Like the official simulator, each reply is one stateless request: the VLM sees the
agent's latest message, not the earlier turns. Unlike it, a message without a page
is shown to the VLM (the official code sends the target image alone, so questions
went unread): the VLM answers the question from the target image.

``prompt_format="official"`` sends the official request instead, for reproducing the
paper: one user message, the official prompt file's text (CC-BY-NC, so read from your
copy with :func:`~sweetrl_gym.simulators.prompts.read_official_prompt`), then the
agent's screenshot (or the official line saying it sent none) and the target's, each
after the official one-line caption; the screenshots as rendered, not scaled; no system
message, and no words of the agent at all; 4,096 tokens at most. Ours (the default)
exists because that text cannot ship here, and so that questions are answered; it
scales screenshots to 640 pixels wide, a fraction of a VLM's image tokens.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PIL import Image

from sweetrl_gym.actions import extract_html, strip_code_fences
from sweetrl_gym.lm import (
    ChatAPIError,
    ChatClient,
    check_client,
    check_int,
    check_temperature,
)
from sweetrl_gym.official_data import HUMAN_PROMPT_FILES, REPOSITORY
from sweetrl_gym.simulators.base import SimulatorError
from sweetrl_gym.simulators.openai_simulator import check_on_error, human_failure
from sweetrl_gym.simulators.prompts import (
    OFFICIAL_MAX_TOKENS,
    check_human_prompt,
    hidden_information,
)

__all__ = [
    "DESIGN_FEEDBACK_PROMPT",
    "DESIGN_QUESTION_PROMPT",
    "OpenAIVisionSimulator",
    "image_data_url",
]

logger = logging.getLogger(__name__)

DESIGN_FEEDBACK_PROMPT = """\
You are role-playing a human designer who asked an AI assistant to build a web page. You \
have an exact design in mind; the assistant cannot see it.

You are shown two screenshots: first, the page the assistant has just built; second, the \
design you want.

Tell the assistant the most outstanding differences between its page and your design, \
as a person would: say what should change, where on the page, and how it should look \
(colours, layout, sizes, missing or extra sections, text). Speak about "your page" and \
"what I want"; never refer to screenshots or images, and never write code. If the page \
already matches your design, say so. Reply in at most three sentences.
"""
"""Instructions when the agent's message carries a page (images: agent's, then target)."""

DESIGN_QUESTION_PROMPT = """\
You are role-playing a human who asked an AI assistant to build a web page. You have an \
exact design in mind, shown in the screenshot; the assistant cannot see it.

Answer the assistant's latest message as that person, using only what the screenshot \
shows (layout, colours, sections, text). If the screenshot does not answer the \
question, say that you don't know. Never refer to a screenshot or an image, and never \
write code. Reply briefly, in at most two sentences.
"""
"""Instructions when the agent's message has no page (image: the target)."""

_UNRENDERED = "[a web page that could not be displayed]"
# The official request's captions (sweet_rl's HumanDesignInteractionEnv.invoke_model).
_OFFICIAL_PAGE = "Below is the design the agent is referring to."
_OFFICIAL_NO_PAGE = "The agent did not provide any visualization."
_OFFICIAL_TARGET = "Below is the ground truth design that the human user wants."
# Ours scales screenshots to fit this box; the official sends them as rendered.
_OUR_IMAGE_SIZE = (640, 2400)


def image_data_url(
    image: Image.Image, *, max_width: int | None = 640, max_height: int | None = 2400
) -> str:
    """Encode a screenshot as a ``data:image/png;base64,…`` URL for an OpenAI chat.

    The image is scaled down (never up), keeping its aspect ratio, to fit in
    ``max_width`` x ``max_height``: a VLM's image tokens grow with the pixels.

    Args:
        image: A PIL image of any mode (transparency goes on white).
        max_width: Widest image sent (``None``: any width).
        max_height: Tallest image sent (``None``: any height).

    Raises:
        TypeError: If ``image`` is not a PIL image.
        ValueError: If it has no pixels or a bound is not a positive int.

    """
    from sweetrl_gym.similarity.perceptual import to_rgb

    for name, bound in (("max_width", max_width), ("max_height", max_height)):
        if bound is not None:
            check_int(name, bound)
    rgb = to_rgb(image)
    scale = min(
        1.0,
        (max_width or rgb.width) / rgb.width,
        (max_height or rgb.height) / rgb.height,
    )
    if scale < 1.0:
        size = (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale)))
        rgb = rgb.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
    buffer = io.BytesIO()
    rgb.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


class OpenAIVisionSimulator:
    """A simulated Frontend human played by a VLM at an OpenAI-compatible endpoint.

    A failing endpoint raises :class:`SimulatorError`; ``on_error="no_response"``
    answers ``"No response."`` instead, as the official code does. A page that cannot
    be rendered is treated as no page (as officially); a target that cannot be rendered
    always raises :class:`SimulatorError` (the task is broken).

    Args:
        client: The endpoint (:class:`~sweetrl_gym.lm.chat_api.ChatClient`: server, model,
            key, timeouts and retries; paper: Qwen2-VL-72B-Instruct), built once and
            shared by agents, simulators and judges.
        prompt: Ours: instructions when the agent sent a page (see
            :data:`DESIGN_FEEDBACK_PROMPT`). Official: your copy of the official file's
            text (``read_official_prompt(path, "frontend")``).
        question_prompt: Ours only: instructions when it did not
            (:data:`DESIGN_QUESTION_PROMPT`).
        prompt_format: ``"ours"`` or ``"official"`` (how the request is built).
        temperature: Sampling temperature (official: 0).
        max_tokens: Most tokens per reply; ``None``: the format's own (ours 512,
            official 4,096). The environment keeps 1,000 characters.
        on_error: ``"raise"``, ``"no_response"`` or ``"official"`` (see
            :data:`~sweetrl_gym.simulators.openai_simulator.ON_ERROR`).
        render: HTML -> screenshot (default: :func:`sweetrl_gym.render.render_html`).
        max_image_width: Screenshots are scaled down to at most this width...
        max_image_height: ...and this height before they are sent. ``None`` (both
            default): the format's own, ours 640 x 2,400, official unscaled (the
            screenshots as rendered, as the official code sends its files).
        target_cache_size: Targets whose encoded screenshot is kept (by hash of HTML).

    Raises:
        ValueError: If an argument is invalid.

    """

    def __init__(
        self,
        client: ChatClient,
        *,
        prompt: str = DESIGN_FEEDBACK_PROMPT,
        question_prompt: str = DESIGN_QUESTION_PROMPT,
        prompt_format: str = "ours",
        temperature: float = 0.0,
        max_tokens: int | None = None,
        on_error: str = "raise",
        render: Callable[[str], Image.Image] | None = None,
        max_image_width: int | None = None,
        max_image_height: int | None = None,
        target_cache_size: int = 64,
    ):
        check_on_error(on_error)
        for name, text in (("prompt", prompt), ("question_prompt", question_prompt)):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{name} must be a non-empty string, got {text!r:.80}")
        check_human_prompt(prompt, prompt_format, "frontend")
        if prompt_format == "official" and prompt == DESIGN_FEEDBACK_PROMPT:
            raise ValueError(
                "prompt_format='official' sends the official prompt's text: pass prompt="
                "read_official_prompt(PATH, 'frontend') with your copy of "
                f"{HUMAN_PROMPT_FILES['frontend']} from {REPOSITORY}"
            )
        if max_tokens is None:
            max_tokens = OFFICIAL_MAX_TOKENS if prompt_format == "official" else 512
        check_temperature(temperature)
        check_int("max_tokens", max_tokens)
        if prompt_format == "ours":
            if max_image_width is None:
                max_image_width = _OUR_IMAGE_SIZE[0]
            if max_image_height is None:
                max_image_height = _OUR_IMAGE_SIZE[1]
        for name, bound in (
            ("max_image_width", max_image_width),
            ("max_image_height", max_image_height),
        ):
            if bound is not None:
                check_int(name, bound)
        check_int("target_cache_size", target_cache_size, least=0)
        if render is not None and not callable(render):
            raise ValueError(f"render must be a function of HTML, got {type(render).__name__}")
        self.client = check_client(client)
        self.prompt = prompt
        self.question_prompt = question_prompt
        self.prompt_format = prompt_format
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.on_error = on_error
        self.max_image_size = (max_image_width, max_image_height)
        self.target_cache_size = target_cache_size
        self._render = render
        self._targets: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        official = prompt_format == "official"
        prompts = (prompt if official else f"{prompt}\0{question_prompt}").encode()
        prompt_hash = hashlib.sha256(prompts).hexdigest()[:8]
        # Everything that changes the replies goes in the name: caches are keyed by it.
        self.name = (
            f"openai-vision:{self.client.model}(prompt={prompt_hash}"
            f"{',format=official' if official else ''},temperature={temperature:g},"
            f"max_tokens={max_tokens},image={_bound(max_image_width)}x"
            f"{_bound(max_image_height)})"
        )

    def __repr__(self) -> str:
        return f"OpenAIVisionSimulator({self.client.base_url!r}, {self.name!r})"

    def reply(self, task: Any, messages: Sequence[Mapping[str, Any]]) -> str:
        """Ask the VLM for the human's reply to the agent's latest message.

        Args:
            task: The task being played; its ``ground_truth`` is the target page's HTML.
            messages: The episode's chat so far, with the agent's latest message as its
                last ``assistant`` message.

        Returns:
            The reply, stripped.

        Raises:
            SimulatorError: If the endpoint fails and ``on_error="raise"``, or the target
                page cannot be rendered.
            ValueError: If ``messages`` has no agent message.
            TypeError: If the task has no ground truth.

        """
        agent_text = _latest_agent_message(messages)
        target_url = self._target_url(hidden_information(task))
        if self.prompt_format == "official":
            chat = self._official_chat(agent_text, target_url)
        else:
            chat = self._chat(agent_text, target_url)
        try:
            text = self.client.complete(
                chat, temperature=self.temperature, max_tokens=self.max_tokens
            )
        except ChatAPIError as err:
            return human_failure(self.name, self.client, self.on_error, err)
        return text.strip()

    def _chat(self, agent_text: str, target_url: str) -> list[dict[str, Any]]:
        html = extract_html(agent_text)
        page_url = None if html is None else self._page_url(html)
        if html is not None and page_url is not None:
            said = strip_code_fences(agent_text.replace(html, "")).strip()
            content = [_text(f"The assistant's message: {said}")] if said else []
            content += [
                _text("The page the assistant built:"),
                _image(page_url),
                _text("The design you want (the assistant cannot see it):"),
                _image(target_url),
                _text("Reply to the assistant as the designer."),
            ]
            return [
                {"role": "system", "content": self.prompt},
                {"role": "user", "content": content},
            ]
        if html is not None:  # the page did not render: the VLM reads the words only
            agent_text = agent_text.replace(html, _UNRENDERED)
        content = [
            _text("The design you want (the assistant cannot see it):"),
            _image(target_url),
            _text(f"The assistant's message:\n{agent_text.strip() or '(empty)'}"),
        ]
        return [
            {"role": "system", "content": self.question_prompt},
            {"role": "user", "content": content},
        ]

    def _official_chat(self, agent_text: str, target_url: str) -> list[dict[str, Any]]:
        html = extract_html(agent_text)
        page_url = None if html is None else self._page_url(html)  # unrendered: no page
        content = [_text(self.prompt)]
        if page_url is not None:
            content += [_text(_OFFICIAL_PAGE), _image(page_url)]
        else:
            content.append(_text(_OFFICIAL_NO_PAGE))
        content += [_text(_OFFICIAL_TARGET), _image(target_url)]
        return [{"role": "user", "content": content}]

    def _renderer(self) -> Callable[[str], Image.Image]:
        if self._render is None:
            from sweetrl_gym.render import render_html

            self._render = render_html
        return self._render

    def _encode(self, image: Image.Image) -> str:
        width, height = self.max_image_size
        return image_data_url(image, max_width=width, max_height=height)

    def _page_url(self, html: str) -> str | None:
        from sweetrl_gym.render import RenderError

        try:
            return self._encode(self._renderer()(html))
        except RenderError as err:
            logger.warning("the agent's page could not be rendered (%s): shown as text", err)
            return None

    def _target_url(self, ground_truth: str) -> str:
        key = hashlib.sha256(ground_truth.encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._targets:
                self._targets.move_to_end(key)
                return self._targets[key]
        from sweetrl_gym.render import RenderError

        try:
            url = self._encode(self._renderer()(ground_truth))
        except RenderError as err:
            raise SimulatorError(
                f"simulated human {self.name} cannot see the target: its page does not "
                f"render ({err})"
            ) from err
        with self._lock:
            if self.target_cache_size:
                self._targets[key] = url
                while len(self._targets) > self.target_cache_size:
                    self._targets.popitem(last=False)
        return url


def _bound(bound: int | None) -> str:
    return "any" if bound is None else str(bound)


def _latest_agent_message(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            content = message.get("content")
            return content if isinstance(content, str) else str(content)
    raise ValueError("messages must contain the agent's message (role 'assistant')")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}
