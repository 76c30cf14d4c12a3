"""A local policy's generation served by an OpenAI-compatible server (vLLM, ``transformers serve``).

HF ``generate`` on one process is the slow part of RL on language models; the paper
samples on vLLM. :class:`ServedModel` sends a :class:`~agents.TransformersAgent`'s
already-formatted prompts to a server's text endpoint, many at a time, so the policy
generates from exactly the text it is trained on. It talks to a running server, or
starts one on a saved policy folder the first time it is needed
(:class:`~sweetrl_gym.lm.server.ModelServer`)::

    served = ServedModel(server=ModelServer("vllm serve {model} --port {port}", folder))
    with served:
        agent.serve_from(served)
        evaluate(agent, "ColBench-Backend-v0", num_tasks=1000)

Training stays local: once the agent's weights change, it generates locally again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from sweetrl_gym.lm import ChatClient, ModelServer, TextCompletion, check_client, check_int

__all__ = ["ServedModel"]


class ServedModel:
    """Samples completions of formatted prompts from a server's ``/completions`` endpoint.

    Requests run concurrently (the server batches them). Several completions of a prompt
    come from one request's ``n`` where the server honours it (vLLM); a server that
    returns fewer (``transformers serve``) is asked once per completion from then on.

    Args:
        client: Names a running server and the served model (its ``model`` is what
            requests ask for: the folder or name the server loaded).
        server: Instead of ``client``, a server to start on first use (and stop on
            :meth:`close`, or on leaving a ``with`` block); requests name its model.
        max_concurrency: Requests in flight at once.

    Attributes:
        honours_n: ``None`` until a request with ``n > 1`` has been answered; then
            whether the server returned all ``n``.

    Raises:
        ValueError: Unless exactly one of ``client`` and ``server`` is given.

    """

    def __init__(
        self,
        client: ChatClient | None = None,
        *,
        server: ModelServer | None = None,
        max_concurrency: int = 32,
    ):
        if (client is None) == (server is None):
            raise ValueError("give a ServedModel either a client or a server to start")
        self._client = None if client is None else check_client(client)
        self.server = server
        self.max_concurrency = check_int("max_concurrency", max_concurrency)
        self.honours_n: bool | None = None
        self._starting = threading.Lock()

    def __repr__(self) -> str:
        if self._client is None:
            return f"ServedModel(server for {self.server.model!r})"  # type: ignore[union-attr]
        return f"ServedModel({self._client.base_url!r}, {self._client.model!r})"

    def __enter__(self) -> ServedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def client(self) -> ChatClient:
        """The client (starting the server first, if this model owns one)."""
        with self._starting:
            if self._client is None:
                assert self.server is not None
                self.server.start()
                self._client = ChatClient(self.server.base_url, self.server.model)
            return self._client

    def close(self) -> None:
        """Stop the server this model started (a no-op for a client's server)."""
        if self.server is not None:
            self.server.stop()
            self._client = None

    def generate(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        top_p: float,
        max_new_tokens: int,
        seed: int | None = None,
    ) -> list[list[TextCompletion]]:
        """Sample ``n`` completions of each prompt (with log-probs when the server has them).

        Args:
            prompts: Formatted prompts (chat template applied).
            n: Completions per prompt.
            temperature: Sampling temperature (0: greedy).
            top_p: Nucleus sampling mass.
            max_new_tokens: Most tokens per completion.
            seed: Base of the requests' seeds (each request gets its own); ``None``: unseeded.

        Returns:
            ``n`` completions per prompt, in the prompts' order.

        Raises:
            ChatAPIError: When a request fails after its retries.

        """
        n = check_int("n", n)

        client = self.client

        def request(prompt: str, count: int, number: int) -> list[TextCompletion]:
            return client.complete_prompt(
                prompt,
                n=count,
                temperature=temperature,
                top_p=top_p,
                max_tokens=max_new_tokens,
                seed=None if seed is None else seed + number,
                logprobs=True,
            )

        def complete(index: int) -> list[TextCompletion]:
            got: list[TextCompletion] = []
            while len(got) < n:
                count = 1 if self.honours_n is False else n - len(got)
                answer = request(prompts[index], count, index * n + len(got))
                if count > 1:
                    self.honours_n = len(answer) >= count
                got += answer[:count]
            return got

        if self.honours_n is False and n > 1:  # one request per completion, all at once
            with ThreadPoolExecutor(self.max_concurrency) as pool:
                flat = list(
                    pool.map(lambda k: request(prompts[k // n], 1, k)[0], range(len(prompts) * n))
                )
            return [flat[i * n : (i + 1) * n] for i in range(len(prompts))]
        with ThreadPoolExecutor(self.max_concurrency) as pool:
            return list(pool.map(complete, range(len(prompts))))
