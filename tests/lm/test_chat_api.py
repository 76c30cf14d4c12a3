import email.utils
import socket
import threading
import time

import pytest

from sweetrl_gym.lm import ChatAPIError, ChatClient
from tests.fake_openai import FakeOpenAI

HELLO = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def make_client(server, sleeps=None, **kwargs):
    kwargs.setdefault("backoff_s", 0.001)
    kwargs.setdefault("max_backoff_s", 0.01)
    if sleeps is not None:
        kwargs["sleep"] = sleeps.append
    return ChatClient(server.base_url, "test-model", **kwargs)


def test_sends_an_openai_request_and_returns_the_content(server):
    client = make_client(server, api_key="sk-test")
    reply = client.complete(HELLO, temperature=0.3, top_p=0.9, max_tokens=17, stop="END", seed=3)
    assert reply == "echo: hi"
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "test-model",
        "messages": HELLO,
        "temperature": 0.3,
        "top_p": 0.9,
        "max_tokens": 17,
        "stop": ["END"],
        "seed": 3,
    }
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"


def test_optional_fields_are_left_to_the_server(server):
    make_client(server).complete(HELLO, temperature=0.0)
    assert server.requests[0].body == {"model": "test-model", "messages": HELLO, "temperature": 0}


def test_api_key_falls_back_to_the_environment_and_is_omitted_without_one(server, monkeypatch):
    make_client(server).complete(HELLO)
    assert "authorization" not in server.requests[-1].headers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    client = make_client(server)
    client.complete(HELLO)
    assert server.requests[-1].headers["authorization"] == "Bearer sk-env"
    assert "sk-env" not in repr(client)


def test_trailing_slash_in_base_url(server):
    client = ChatClient(server.base_url + "/", "m")
    assert client.url == server.base_url + "/chat/completions"
    assert client.complete(HELLO) == "echo: hi"


RETRYABLE = {
    "500": (500, "The server had an error."),
    "503": (503, "Service unavailable."),
    "429": (429, "Rate limit reached."),
    "malformed_json": (200, "not JSON"),
    "no_choices": (200, "no 'choices'"),
    "null_content": (200, "content is NoneType"),
    "disconnect": (None, "no HTTP status"),
}


@pytest.mark.parametrize("fault", sorted(RETRYABLE))
def test_transient_failures_are_retried_until_success(server, fault):
    server.fail(fault, times=2)
    sleeps = []
    assert make_client(server, sleeps, max_retries=2).complete(HELLO) == "echo: hi"
    assert [r.fault for r in server.requests] == [fault, fault, None]
    assert len(sleeps) == 2


@pytest.mark.parametrize("fault", sorted(RETRYABLE))
def test_persistent_failures_raise_after_max_retries(server, fault):
    server.fail(fault, times=3)
    client = make_client(server, max_retries=2)
    with pytest.raises(ChatAPIError) as caught:
        client.complete(HELLO)
    status, detail = RETRYABLE[fault]
    err = caught.value
    assert (err.status, err.attempts, len(server.requests)) == (status, 3, 3)
    message = str(err)
    assert client.url in message and "'test-model'" in message and "3 attempts" in message
    assert detail in message
    if status is not None:
        assert f"HTTP {status}" in message


@pytest.mark.parametrize(
    ("fault", "status", "detail"),
    [("401", 401, "Incorrect API key provided."), ("400", 400, "Invalid request.")],
)
def test_client_errors_are_not_retried(server, fault, status, detail):
    server.fail(fault)
    sleeps = []
    with pytest.raises(ChatAPIError) as caught:
        make_client(server, sleeps, max_retries=5).complete(HELLO)
    assert caught.value.status == status and caught.value.attempts == 1
    assert detail in str(caught.value) and "1 attempt:" in str(caught.value)
    assert len(server.requests) == 1 and sleeps == []


def test_wrong_path_is_a_404_not_retried(server):
    client = ChatClient(server.base_url + "/nope", "m", max_retries=3, backoff_s=0.001)
    with pytest.raises(ChatAPIError, match=r"HTTP 404.*no route POST /v1/nope/chat/completions"):
        client.complete(HELLO)
    assert len(server.requests) == 1


def test_retry_after_is_honoured_and_capped(server):
    sleeps = []
    client = make_client(server, sleeps, backoff_s=5.0, max_backoff_s=10.0)
    server.fail("503", retry_after="0.05")
    server.fail("429", retry_after="120")
    client.complete(HELLO)
    assert sleeps == [0.05, 10.0]
    soon = email.utils.formatdate(time.time() + 3, usegmt=True)
    server.fail("503", retry_after=soon)
    sleeps.clear()
    client.complete(HELLO)
    assert 1.0 < sleeps[0] <= 3.0


def test_backoff_doubles_with_jitter_up_to_the_cap(server):
    sleeps = []
    server.fail("500", times=4)
    make_client(server, sleeps, backoff_s=1.0, max_backoff_s=3.0, max_retries=4).complete(HELLO)
    bounds = [(0.5, 1.0), (1.0, 2.0), (1.5, 3.0), (1.5, 3.0)]
    assert len(sleeps) == 4
    assert all(low <= s <= high for s, (low, high) in zip(sleeps, bounds))


def test_a_slow_server_times_out_and_is_retried(server):
    server.fail("delay", delay_s=5.0)
    start = time.monotonic()
    with pytest.raises(ChatAPIError, match=r"timed out after 0\.2s") as caught:
        make_client(server, timeout_s=0.2, max_retries=0).complete(HELLO)
    assert caught.value.status is None and caught.value.attempts == 1
    assert time.monotonic() - start < 4.0  # gave up long before the server answered
    server.fail("delay", delay_s=5.0)
    assert make_client(server, timeout_s=0.2, max_retries=1).complete(HELLO) == "echo: hi"
    assert [r.fault for r in server.requests[1:]] == ["delay", None]


def test_nothing_listening_raises_after_retries():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ChatClient(f"http://127.0.0.1:{port}/v1", "m", max_retries=2, backoff_s=0.001)
    with pytest.raises(ChatAPIError, match="cannot connect") as caught:
        client.complete(HELLO)
    assert caught.value.attempts == 3 and caught.value.status is None


def test_one_client_serves_many_threads(server):
    client = make_client(server)
    server.fail("500", times=4)
    results = {}

    def ask(i):
        results[i] = client.complete([{"role": "user", "content": f"q{i}"}])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: f"echo: q{i}" for i in range(12)}
    assert len(server.requests) == 16


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"base_url": "localhost:8000/v1"}, "http:// or https://"),
        ({"base_url": "ftp://host/v1"}, "http:// or https://"),
        ({"base_url": "http:///v1"}, "name a host"),
        ({"base_url": "http://h/v1/chat/completions"}, "without /chat/completions"),
        ({"model": " "}, "model must be a non-empty string"),
        ({"max_retries": -1}, "max_retries must be an int >= 0"),
        ({"max_retries": 1.5}, "max_retries must be an int >= 0"),
        ({"timeout_s": 0}, "timeout_s must be > 0"),
        ({"backoff_s": -1}, "backoff_s must be >= 0"),
        ({"backoff_s": 2.0, "max_backoff_s": 1.0}, "must be at least backoff_s"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs, match):
    args = {"base_url": "http://localhost:8000/v1", "model": "m", **kwargs}
    with pytest.raises(ValueError, match=match):
        ChatClient(args.pop("base_url"), args.pop("model"), **args)


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ([], ValueError),
        ("hi", TypeError),
        (["hi"], TypeError),
        ([{"role": "user"}], ValueError),
        ([{"role": "user", "content": None}], ValueError),
    ],
)
def test_bad_messages_fail_before_sending(server, messages, error):
    with pytest.raises(error, match="messages"):
        make_client(server).complete(messages)
    with pytest.raises(ValueError, match="temperature"):
        make_client(server).complete(HELLO, temperature=-1)
    assert server.requests == []
