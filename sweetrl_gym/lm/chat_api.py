"""A client for OpenAI-compatible chat endpoints, on the official ``openai`` SDK.

Any server that speaks ``POST {base_url}/chat/completions`` works: vLLM, the llama.cpp
server, ``transformers serve``, Ollama, hosted APIs. The SDK sends the requests (its
pooled connections, timeouts and errors); the retry policy is ours, for all callers alike:
what is worth retrying (connection errors, timeouts, HTTP 408/429/5xx, and replies that
are not a chat completion, which the SDK would not retry) is retried with exponential
backoff and jitter, honouring ``Retry-After`` up to a cap; other client errors fail at
once (a wrong key or model name does not get better by asking again)::

    client = ChatClient("http://localhost:8000/v1", "meta-llama/Llama-3.1-8B-Instruct")
    text = client.complete([{"role": "user", "content": "Hi!"}], temperature=0.0)

The same client also sends already-formatted prompts to the legacy text endpoint,
``POST {base_url}/completions`` (:meth:`ChatClient.complete_prompt`): a local policy's
generation served by vLLM or ``transformers serve`` sees exactly the prompt it was trained on.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import math
import os
import random
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweetrl_gym.messages import validate_messages
from sweetrl_gym.setting_types import is_finite_number

__all__ = [
    "ChatAPIError",
    "ChatClient",
    "TextCompletion",
    "check_base_url",
    "check_client",
    "check_int",
    "check_temperature",
]

logger = logging.getLogger(__name__)

_RETRY_STATUSES = frozenset({408, 429})  # and every 5xx
_MAX_RESPONSE_BYTES = 32 * 1024 * 1024  # a reply is text; anything larger is not a reply
_EXCERPT_CHARS = 300
_NO_KEY = "no-key"  # the SDK wants a key; without one, no Authorization header is sent


class ChatAPIError(RuntimeError):
    """A chat request failed: the server refused it, or every attempt failed.

    Attributes:
        url: The endpoint that was called.
        model: The model asked for.
        status: The last HTTP status received (``None`` when no response came back).
        body_excerpt: The start of the last response body (or the error seen).
        attempts: How many requests were made.

    """

    def __init__(
        self,
        message: str,
        *,
        url: str = "",
        model: str = "",
        status: int | None = None,
        body_excerpt: str = "",
        attempts: int = 0,
    ):
        super().__init__(message)
        self.url = url
        self.model = model
        self.status = status
        self.body_excerpt = body_excerpt
        self.attempts = attempts


@dataclass(frozen=True)
class TextCompletion:
    """One completion of a prompt from the text endpoint.

    Attributes:
        text: The generated text.
        logprob: The sum of its tokens' log-probabilities under the served model, when
            the server returned them (vLLM does; ``transformers serve`` does not).
        finish_reason: Why generation stopped (``"stop"``, ``"length"``), as reported.

    """

    text: str
    logprob: float | None = None
    finish_reason: str | None = None


class _AttemptFailed(Exception):
    """One attempt failed; ``retryable`` says whether another may succeed."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool,
        status: int | None = None,
        excerpt: str = "",
        retry_after: float | None = None,
        explained: bool = False,
    ):
        super().__init__(reason)
        self.reason = reason
        self.explained = explained  # the reason is the server's own error message
        self.retryable = retryable
        self.status = status
        self.excerpt = excerpt
        self.retry_after = retry_after


def check_client(client: Any) -> ChatClient:
    """Return ``client`` if it is a :class:`ChatClient`, else say how to make one.

    Raises:
        TypeError: Naming what was given.

    """
    if not isinstance(client, ChatClient):
        raise TypeError(
            f"client must be a ChatClient, got {type(client).__name__} (build one with "
            "ChatClient('http://localhost:8000/v1', 'model-name', ...) and share it)"
        )
    return client


def check_int(name: str, value: Any, least: int = 1) -> int:
    """Return ``value`` if it is an int (not a bool) of at least ``least``.

    Raises:
        ValueError: Naming the setting, otherwise.

    """
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
    return value


def check_temperature(value: Any, name: str = "temperature") -> float:
    """Return a sampling temperature (a number >= 0; 0 means greedy).

    Raises:
        ValueError: Naming the setting, otherwise.

    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


class ChatClient:
    """Calls ``POST {base_url}/chat/completions`` and returns the reply text.

    Thread-safe: calls share the SDK's pool of connections and keep no state of their
    own, so one client may serve a thread pool (and an agent, a simulator and a judge).

    Args:
        base_url: The API root, e.g. ``http://localhost:8000/v1`` (vLLM) or
            ``https://api.openai.com/v1``.
        model: The model name the server expects.
        api_key: Sent as ``Authorization: Bearer ...``; defaults to the
            ``OPENAI_API_KEY`` environment variable. Without a key no header is sent
            (local servers usually need none).
        timeout_s: Seconds to wait on each network operation (connect, each read).
        max_retries: Retries after the first attempt (0: try once).
        backoff_s: Wait before the first retry; doubles each retry, with random jitter.
        max_backoff_s: Longest wait between attempts (also caps ``Retry-After``).
        sleep: The function that waits (tests pass a recorder).

    Raises:
        ValueError: If an argument is out of range.

    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.base_url = check_base_url(base_url)
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        _check_number("timeout_s", timeout_s, positive=True)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an int >= 0, got {max_retries!r}")
        _check_number("backoff_s", backoff_s)
        _check_number("max_backoff_s", max_backoff_s)
        if max_backoff_s < backoff_s:
            raise ValueError(
                f"max_backoff_s ({max_backoff_s}) must be at least backoff_s ({backoff_s})"
            )
        if api_key is None:
            api_key = os.environ.get("OPENAI_API_KEY")
        if api_key is not None and not isinstance(api_key, str):
            raise ValueError(f"api_key must be a string, got {type(api_key).__name__}")
        self.model = model
        self.url = f"{self.base_url}/chat/completions"
        self.text_url = f"{self.base_url}/completions"
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self._api_key = api_key or None
        self._sleep = sleep
        self._client = _sdk_client(self.base_url, self._api_key, self.timeout_s)

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"ChatClient({self.base_url!r}, {self.model!r}, api_key={key})"

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        temperature: float = 1.0,
        top_p: float | None = None,
        max_tokens: int | None = None,
        stop: str | Sequence[str] | None = None,
        seed: int | None = None,
    ) -> str:
        """Send one chat and return ``choices[0].message.content``.

        Args:
            messages: The chat in OpenAI format.
            temperature: Sampling temperature (0: greedy).
            top_p: Nucleus sampling mass (``None``: the server's default).
            max_tokens: Most tokens to generate (``None``: the server's default).
            stop: Stop sequence(s).
            seed: Sampling seed, for servers that honour it.

        Returns:
            The reply text.

        Raises:
            ChatAPIError: On a non-retryable HTTP error, or when every attempt failed.
            TypeError, ValueError: If ``messages`` or a sampling argument is invalid.

        """
        body: dict[str, Any] = {
            "model": self.model,
            "messages": validate_messages(messages),
            **_sampling_fields(temperature, top_p, max_tokens, seed),
        }
        if stop is not None:
            body["stop"] = [stop] if isinstance(stop, str) else list(stop)
        try:
            json.dumps(body)
        except (TypeError, ValueError) as err:
            raise ValueError(f"the chat cannot be sent as JSON: {err}") from err
        return self._post_with_retries(body, self._post_chat, self.url)

    def complete_prompt(
        self,
        prompt: str,
        *,
        n: int = 1,
        temperature: float = 1.0,
        top_p: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        logprobs: bool = False,
    ) -> list[TextCompletion]:
        """Send one formatted prompt to the text endpoint; return its completions.

        The prompt goes as is (no chat template is applied by the server), so a policy
        that formats its own prompts generates from exactly the text it was trained on.
        A temperature above 0 samples, also on ``transformers serve`` (which otherwise
        follows the model's generation config, greedy for a saved policy).

        Args:
            prompt: The whole prompt, chat template included.
            n: Completions asked for. A server that ignores ``n`` (``transformers
                serve``) returns fewer; the caller asks again for the rest.
            temperature: Sampling temperature (0: greedy).
            top_p: Nucleus sampling mass (``None``: the server's default).
            max_tokens: Most tokens to generate (``None``: the server's default).
            seed: Sampling seed, for servers that honour it.
            logprobs: Ask for the sampled tokens' log-probabilities.

        Returns:
            The completions the server returned, in its order (at least one).

        Raises:
            ChatAPIError: On a non-retryable HTTP error, or when every attempt failed.
            ValueError: If the prompt or a sampling argument is invalid.

        """
        if not isinstance(prompt, str) or not prompt:
            raise ValueError(f"prompt must be a non-empty str, got {prompt!r:.80}")
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "n": check_int("n", n),
            **_sampling_fields(temperature, top_p, max_tokens, seed),
        }
        if logprobs:
            body["logprobs"] = 1  # the legacy field: log-probs of the sampled tokens
        # `transformers serve` samples only where the generation config says do_sample,
        # and a saved policy's does not: at any temperature it answered greedily, so
        # every "sample" of a prompt was the same. Its own field says so (unset values
        # still come from the model's config); other servers ignore it (vLLM logs it).
        body["extra_body"] = {"generation_config": json.dumps({"do_sample": temperature > 0})}
        return self._post_with_retries(body, self._post_text, self.text_url)

    def _post_with_retries(
        self, body: dict[str, Any], post: Callable[[dict[str, Any]], Any], url: str
    ) -> Any:
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return post(body)
            except _AttemptFailed as failure:
                if not failure.retryable or attempt == attempts:
                    raise self._error(failure, attempt, url) from None
                delay = self._delay(attempt, failure.retry_after)
                logger.info(
                    "request to %s failed (%s), retry %d/%d in %.2fs",
                    url,
                    failure.reason,
                    attempt,
                    self.max_retries,
                    delay,
                )
                self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _post_chat(self, body: dict[str, Any]) -> str:
        raw, status = self._post_once(self._client.chat.completions, body)
        return _reply_text(raw, status)

    def _post_text(self, body: dict[str, Any]) -> list[TextCompletion]:
        raw, status = self._post_once(self._client.completions, body)
        return _text_completions(raw, status)

    def _post_once(self, endpoint: Any, body: dict[str, Any]) -> tuple[bytes, int]:
        import openai

        # Without a key the Authorization header is left out (local servers need none).
        headers = {} if self._api_key else {"Authorization": openai.omit}
        try:
            response = endpoint.with_raw_response.create(**body, extra_headers=headers)
        except openai.APIStatusError as err:
            raise _status_failure(err) from None
        except openai.APITimeoutError:
            raise _AttemptFailed(f"timed out after {self.timeout_s:g}s", retryable=True) from None
        except openai.APIConnectionError as err:
            reason = err.__cause__ or err
            raise _AttemptFailed(f"cannot connect: {reason}", retryable=True) from None
        raw, status = response.http_response.content, response.http_response.status_code
        if len(raw) > _MAX_RESPONSE_BYTES:
            raise _AttemptFailed(
                f"response larger than {_MAX_RESPONSE_BYTES} bytes", retryable=True, status=status
            )
        return raw, status

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff_s)
        delay = min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s)
        return random.uniform(delay / 2, delay)  # jitter spreads out a thread pool's retries

    def _error(self, failure: _AttemptFailed, attempts: int, url: str) -> ChatAPIError:
        status = f"HTTP {failure.status}" if failure.status is not None else "no HTTP status"
        kind = "chat request" if url == self.url else "completion request"
        message = (
            f"{kind} to {url} (model {self.model!r}) failed after {attempts} "
            f"attempt{'s' if attempts != 1 else ''}: {status}: {failure.reason}"
        )
        if failure.excerpt and not failure.explained:
            message += f" — response: {failure.excerpt}"
        return ChatAPIError(
            message,
            url=url,
            model=self.model,
            status=failure.status,
            body_excerpt=failure.excerpt or failure.reason,
            attempts=attempts,
        )


def _sdk_client(base_url: str, api_key: str | None, timeout_s: float) -> Any:
    """Build the SDK client; our retry policy sits on top, so it makes no retries itself."""
    import openai

    # A local server is reached directly even when http(s)_proxy is set.
    local = _is_loopback(urllib.parse.urlsplit(base_url).hostname or "")
    return openai.OpenAI(
        base_url=base_url,
        api_key=api_key or _NO_KEY,
        timeout=timeout_s,
        max_retries=0,
        http_client=openai.DefaultHttpxClient(trust_env=not local),
    )


def _status_failure(err: Any) -> _AttemptFailed:
    """Turn an HTTP error status (``openai.APIStatusError``) into one failed attempt."""
    try:
        raw = err.response.content
    except Exception:  # a body that could not be read: the status still says enough
        raw = b""
    status = err.status_code
    server_message = _server_error_message(raw)
    retryable = status in _RETRY_STATUSES or status >= 500
    return _AttemptFailed(
        server_message or str(err.response.reason_phrase or "no error message"),
        explained=bool(server_message),
        retryable=retryable,
        status=status,
        excerpt=_excerpt(raw),
        retry_after=_parse_retry_after(err.response.headers.get("Retry-After"))
        if retryable
        else None,
    )


def _reply_text(raw: bytes, status: int) -> str:
    choices, malformed = _choices(raw, status)
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise malformed(f"choices[0].message.content is {type(content).__name__}, not str")
    return content


def _text_completions(raw: bytes, status: int) -> list[TextCompletion]:
    choices, malformed = _choices(raw, status)
    completions = []
    for index, choice in enumerate(choices):
        text = choice.get("text") if isinstance(choice, dict) else None
        if not isinstance(text, str):
            raise malformed(f"choices[{index}].text is {type(text).__name__}, not str")
        logprob = _summed_logprob(choice.get("logprobs"))
        completions.append(TextCompletion(text, logprob, choice.get("finish_reason")))
    return completions


def _choices(raw: bytes, status: int) -> tuple[list[Any], Callable[[str], _AttemptFailed]]:
    """Return a completion body's non-empty ``choices``, and how to say a choice is malformed.

    Raises:
        _AttemptFailed: (retryable) If the body is not a JSON object with ``choices``.

    """
    excerpt = _excerpt(raw)

    def malformed(what: str) -> _AttemptFailed:
        return _AttemptFailed(
            f"malformed response ({what})", retryable=True, status=status, excerpt=excerpt
        )

    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise malformed("not JSON") from None
    if not isinstance(data, dict):
        raise malformed(f"a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise malformed("no 'choices'")
    return choices, malformed


def _summed_logprob(logprobs: Any) -> float | None:
    """Sum the legacy ``logprobs.token_logprobs``; ``None`` if absent or malformed."""
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    return float(sum(values))


def _server_error_message(raw: bytes) -> str:
    """Return the message of an OpenAI-style error body (``{"error": {"message": ...}}``)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _excerpt(error["message"].encode("utf-8"))
    if isinstance(error, str):
        return _excerpt(error.encode("utf-8"))
    return ""


def _excerpt(raw: bytes) -> str:
    text = " ".join(raw[: _EXCERPT_CHARS * 4].decode("utf-8", errors="replace").split())
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…"


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def check_base_url(base_url: str) -> str:
    """Return the API root ``base_url`` (stripped, no trailing slash) if it is usable.

    Raises:
        ValueError: Saying what is wrong (scheme, host, query, an endpoint path).

    """
    if not isinstance(base_url, str):
        raise ValueError(f"base_url must be a string, got {type(base_url).__name__}")
    parts = urllib.parse.urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"base_url must start with http:// or https:// and name a host, got {base_url!r} "
            "(e.g. 'http://localhost:8000/v1')"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"base_url must not have a query or fragment, got {base_url!r}")
    if parts.path.rstrip("/").endswith("/chat/completions"):
        raise ValueError(f"base_url is the API root, without /chat/completions, got {base_url!r}")
    return base_url.strip().rstrip("/")


def _sampling_fields(
    temperature: float, top_p: float | None, max_tokens: int | None, seed: int | None
) -> dict[str, Any]:
    """Return the sampling fields of both endpoints' requests, checked; unset ones left out."""
    fields: dict[str, Any] = {"temperature": _check_number("temperature", temperature)}
    if top_p is not None:
        fields["top_p"] = _check_number("top_p", top_p)
    if max_tokens is not None:
        fields["max_tokens"] = check_int("max_tokens", max_tokens)
    if seed is not None:
        fields["seed"] = int(seed)
    return fields


def _check_number(name: str, value: Any, *, positive: bool = False) -> float:
    if not is_finite_number(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return value


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
