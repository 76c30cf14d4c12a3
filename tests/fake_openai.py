"""A fake OpenAI-compatible chat server on loopback, with scriptable failures.

A real HTTP server (``ThreadingHTTPServer`` on ``127.0.0.1``, a free port, a daemon
thread) that answers ``POST /v1/chat/completions`` like the OpenAI API::

    with FakeOpenAI(reply=lambda messages: messages[-1]["content"].upper()) as server:
        server.fail("503", retry_after="0.01")      # the next request gets a 503
        client = ChatClient(server.base_url, "m", backoff_s=0.001)
        assert client.complete([{"role": "user", "content": "hi"}]) == "HI"
        assert [r.body["model"] for r in server.requests] == ["m", "m"]

Each request takes the next injected fault, if any (see :data:`FAULTS`); the others get
``reply(messages)``. ``POST /v1/completions`` (the text endpoint) answers ``text_reply(prompt,
index)`` for each of the ``n`` completions asked (only one when ``honours_n=False``, as
``transformers serve`` does), with token log-probs when asked and ``returns_logprobs``. The server records every request and how many were in flight at
once (``max_in_flight``), so tests can check concurrency without timing.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FAULTS", "FakeOpenAI", "RecordedRequest", "echo", "echo_text"]

FAULTS = {
    "500": "HTTP 500 with an OpenAI-style error body",
    "503": "HTTP 503 with a Retry-After header (``retry_after``, default '0')",
    "429": "HTTP 429 rate limit (with Retry-After when ``retry_after`` is given)",
    "401": "HTTP 401 with an OpenAI-style invalid_api_key error",
    "400": "HTTP 400 with an OpenAI-style invalid_request_error",
    "delay": "wait ``delay_s`` seconds, then answer normally (a slow server)",
    "malformed_json": "HTTP 200 with a body that is not JSON",
    "no_choices": "HTTP 200 with JSON that has no 'choices'",
    "null_content": "HTTP 200 with choices[0].message.content = null",
    "disconnect": "close the connection without sending a response",
}

CHAT_PATH = "/v1/chat/completions"
TEXT_PATH = "/v1/completions"


def echo(messages: list[dict[str, Any]]) -> str:
    """Default reply: ``"echo: "`` + the last message's content."""
    return f"echo: {messages[-1]['content']}"


def echo_text(prompt: str, index: int) -> str:
    """Default text completion: ``"<index>: "`` + the prompt's last 20 characters."""
    return f"{index}: {prompt[-20:]}"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (header names lower-cased)."""

    path: str
    headers: dict[str, str]
    body: Any
    fault: str | None


@dataclass(frozen=True)
class _Fault:
    kind: str
    retry_after: str | None = None
    delay_s: float = 0.0


@dataclass
class _State:
    reply: Callable[[list[dict[str, Any]]], str]
    delay_s: float
    text_reply: Callable[[str, int], str] = echo_text
    honours_n: bool = True
    returns_logprobs: bool = True
    completions: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    faults: collections.deque[_Fault] = field(default_factory=collections.deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    stopping: threading.Event = field(default_factory=threading.Event)


class FakeOpenAI:
    """A loopback OpenAI-compatible chat server for tests.

    Args:
        reply: Maps the request's messages to the reply text (default: :func:`echo`).
            If it raises, the server answers HTTP 500 with the error.
        delay_s: Seconds every request waits before it is answered.
        text_reply: Maps a text request's prompt and the completion's number (counted
            over the server's life) to its text (default: :func:`echo_text`).
        honours_n: Return ``n`` text completions (else one, whatever ``n`` is).
        returns_logprobs: Return token log-probs (-0.5 a word) when a text request asks.

    """

    def __init__(
        self,
        reply: Callable[[list[dict[str, Any]]], str] = echo,
        *,
        delay_s: float = 0.0,
        text_reply: Callable[[str, int], str] = echo_text,
        honours_n: bool = True,
        returns_logprobs: bool = True,
    ):
        self._state = _State(
            reply=reply,
            delay_s=delay_s,
            text_reply=text_reply,
            honours_n=honours_n,
            returns_logprobs=returns_logprobs,
        )
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = self._state  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """The API root to give a client, e.g. ``http://127.0.0.1:PORT/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def max_in_flight(self) -> int:
        """The most requests that were being handled at the same time."""
        with self._state.lock:
            return self._state.max_in_flight

    def fail(
        self,
        kind: str,
        *,
        times: int = 1,
        retry_after: str | None = None,
        delay_s: float = 0.0,
    ) -> None:
        """Make the next ``times`` requests fail with ``kind`` (one of :data:`FAULTS`).

        Args:
            kind: The fault.
            times: How many consecutive requests get it.
            retry_after: The ``Retry-After`` header of a 503 or 429.
            delay_s: Seconds to wait before serving the fault (``"delay"`` then answers
                normally: longer than the client's timeout, it is a timeout).

        """
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; choose from {sorted(FAULTS)}")
        if kind == "503" and retry_after is None:
            retry_after = "0"
        with self._state.lock:
            self._state.faults.extend([_Fault(kind, retry_after, delay_s)] * times)

    def close(self) -> None:
        """Stop serving; handlers still waiting on a delay give up."""
        self._state.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog (5) drops bursts of concurrent connects


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeOpenAI/1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self._send_error(404, "not_found", f"no route GET {self.path}")

    def do_POST(self) -> None:
        state: _State = self.server.state  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        with state.lock:
            fault = state.faults.popleft() if state.faults else None
            state.requests.append(
                RecordedRequest(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    fault.kind if fault else None,
                )
            )
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        self._in_flight = True
        try:
            state.stopping.wait(state.delay_s + (fault.delay_s if fault else 0.0))
            if state.stopping.is_set():
                return  # shutting down: drop the connection
            self._respond(state, body, fault)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its timeout fired first)
        finally:
            self._leave_flight()

    def _leave_flight(self) -> None:
        # Called before the answer's bytes go out: once the client has them it may send
        # its next request, which must not be counted beside this finished one.
        if getattr(self, "_in_flight", False):
            self._in_flight = False
            state: _State = self.server.state  # type: ignore[attr-defined]
            with state.lock:
                state.in_flight -= 1

    def _respond(self, state: _State, body: Any, fault: _Fault | None) -> None:
        kind = fault.kind if fault else None
        if self.path == TEXT_PATH and kind in (None, "delay"):
            self._respond_text(state, body)
        elif self.path not in (CHAT_PATH, TEXT_PATH):
            self._send_error(404, "not_found", f"no route POST {self.path}")
        elif kind == "disconnect":
            self.close_connection = True  # nothing written: the client sees a closed socket
        elif kind == "500":
            self._send_error(500, "server_error", "The server had an error.")
        elif kind in ("503", "429"):
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            if kind == "503":
                self._send_error(503, "server_error", "Service unavailable.", headers)
            else:
                self._send_error(429, "rate_limit_exceeded", "Rate limit reached.", headers)
        elif kind == "401":
            self._send_error(401, "invalid_api_key", "Incorrect API key provided.")
        elif kind == "400":
            self._send_error(400, "invalid_request_error", "Invalid request.")
        elif kind == "malformed_json":
            self._send(200, b'{"id": "chatcmpl-x", "choices": [{"message": ')
        elif kind == "no_choices":
            self._send_json(200, {"id": "chatcmpl-x", "object": "chat.completion"})
        elif not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._send_error(400, "invalid_request_error", "Body needs a 'messages' list.")
        else:
            try:
                content = None if kind == "null_content" else state.reply(body["messages"])
            except Exception as err:
                self._send_error(500, "server_error", f"reply function failed: {err!r}")
                return
            self._send_json(200, _completion(body.get("model"), content))

    def _respond_text(self, state: _State, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("prompt"), str):
            self._send_error(400, "invalid_request_error", "Body needs a 'prompt' string.")
            return
        count = int(body.get("n") or 1) if state.honours_n else 1
        choices = []
        for index in range(count):
            with state.lock:
                number = state.completions
                state.completions += 1
            text = state.text_reply(body["prompt"], number)
            choice: dict[str, Any] = {"index": index, "text": text, "finish_reason": "stop"}
            if body.get("logprobs") and state.returns_logprobs:
                words = text.split()
                choice["logprobs"] = {"tokens": words, "token_logprobs": [-0.5] * len(words)}
            choices.append(choice)
        self._send_json(200, {"id": "cmpl-fake", "object": "text_completion", "choices": choices})

    def _send_error(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        error = {"error": {"message": message, "type": code, "param": None, "code": code}}
        self._send_json(status, error, headers)

    def _send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode("utf-8"), headers)

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self._leave_flight()
        self.end_headers()
        self.wfile.write(payload)


def _completion(model: Any, content: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


_TRANSPORT = ("api_key", "timeout_s", "max_retries", "backoff_s", "max_backoff_s", "sleep")


def fast_client(base_url, model, kwargs):
    """A ChatClient with quick retries; its settings are taken out of ``kwargs`` (the rest stay)."""
    from sweetrl_gym.lm import ChatClient

    settings = {"backoff_s": 0.001, "max_backoff_s": 0.01}
    settings.update({key: kwargs.pop(key) for key in _TRANSPORT if key in kwargs})
    return ChatClient(base_url, model, **settings)
