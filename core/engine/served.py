"""A model behind an OpenAI-compatible server (vLLM, llama.cpp's server, ...), as a model source.

Scoring goes through ``/v1/completions`` with token-id prompts and ``prompt_logprobs`` (vLLM's extension:
each prompt token's log-prob and rank), so the server computes exactly what the in-process pass does,
on its own tokenization (``/tokenize``). A connected server is registered under its spec string
(``served:NAME@URL``), so stores, run keys and reports name it like any other model; the weights behind
an API cannot be verified, and its identity says so.

The API key is read from the environment variable the user names, never from the command line, and is
never printed, stored or written into provenance.
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from core.engine import served_answers as answers
from core.engine.capabilities import GENERATION, TARGET_LOGPROBS, TOP_ALTERNATIVES
from core.engine.served_tokens import token_offsets
from core.engine.start_token import ENDOFTEXT, is_chat_role_token
from core.errors import LeakLensError, ModelLoadError

SERVED_PREFIX = "served:"
_T = TypeVar("_T")
DEFAULT_CONCURRENCY = 4
"""Requests in flight at once; a server batches concurrent requests, so a few keep it busy."""
DEFAULT_TIMEOUT_S = 300.0
PROMPTS_PER_REQUEST = 32
"""Prompts sent in one completions request (the API takes a list)."""
ALTERNATIVES_PER_POSITION = 10
"""The likeliest tokens per position the neighbourhood test searches (``core.methods.neighbours``)."""
RETRIES = 5
"""Attempts for a request the server turns away for now (429, 503) or that fails to connect mid-run."""
BACKOFF_S = 1.0
READ_CHUNK_BYTES = 1 << 16
"""Answers are read in pieces so that ``--timeout`` is checked while a long answer arrives."""
PROBE_TEXT = "LeakLens checks the tokenizer: naïve café, 1,234 tokens — «quoted»."
"""Text both tokenizers must split identically before a served model is scored with a local tokenizer."""


class ServedModelError(ModelLoadError):
    """The server cannot be used as asked: unreachable, refusing the key, missing a feature, ..."""

    status: int | None = None
    """The HTTP status the server answered with, when it answered one (404: no such endpoint)."""


class ServerFault(ServedModelError):
    """The server could not be asked at all (unreachable, late, busy, failing, garbled): never read as a missing
    capability."""


@dataclass(frozen=True)
class Endpoint:
    """How to reach a served model (what the user typed; the key stays in its environment variable)."""

    url: str
    """OpenAI-compatible base URL, e.g. ``http://host:8000/v1``."""
    model: str | None = None
    """Served model name; None: the only one the server lists."""
    api_key_env: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = DEFAULT_TIMEOUT_S
    tokenizer: str | None = None
    """A local tokenizer (folder or cached hub id) for servers without ``/tokenize``."""
    start_token: str | None = None


def public_url(url: str) -> str:
    """The base URL without credentials, query or fragment, and without a trailing slash: what is recorded."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _server_root(base: str) -> str:
    """vLLM serves ``/tokenize`` and ``/version`` beside ``/v1``, not under it."""
    return base[: -len("/v1")] if base.endswith("/v1") else base


@dataclass(eq=False)
class ServedModel:
    """A connected served model: what it is, what it can compute, and the requests that score with it."""

    endpoint: Endpoint
    base_url: str
    name: str
    """The served model's name on the server."""
    server_version: str | None
    model_root: str | None
    """What the server says the model is (vLLM: the folder or hub id it loaded)."""
    max_context: int
    start_token_id: int
    start_token: str
    capabilities: frozenset[str]
    _tokenizer: Any = None
    _session_local: threading.local = field(default_factory=threading.local)

    @property
    def spec(self) -> str:
        return f"{SERVED_PREFIX}{self.name}@{self.base_url}"

    @property
    def source_label(self) -> str:
        return f"the server at {self.base_url}"

    def describe(self) -> str:
        version = f"vLLM {self.server_version}" if self.server_version else "server"
        return f"{self.name} served at {self.base_url} · {version} · start token {self.start_token}"

    @property
    def device_label(self) -> str:
        return "server"

    def status_line(self) -> str:
        """One plain line on where the model runs (the Home page's model status)."""
        return f"Served at {self.base_url} ({self.model_root}) · context {self.max_context:,} tokens"

    def encode(self, text: str) -> list[int]:
        """The ids of ``text`` without special tokens, as the server tokenizes it."""
        return self.tokenize(text)[0]

    def identity(self) -> dict[str, Any]:
        """What identifies the model, as far as an API can tell; the weights themselves cannot be verified."""
        return {
            "kind": "served",
            "endpoint": self.base_url,
            "served_model": self.name,
            "server_version": self.server_version,
            "model_id": self.model_root,
            "weights": "not verifiable through an API",
        }

    # -- tokens ------------------------------------------------------------------------------------
    def tokenize(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """(ids, character offsets) of ``text`` without special tokens, as the server tokenizes it."""
        if self._tokenizer is not None:
            enc = self._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            return list(enc["input_ids"]), [(int(s), int(e)) for s, e in enc["offset_mapping"]]
        data, ids = server_tokens(self, text, add_special_tokens=False, return_token_strs=True)
        offsets = token_offsets(text, [str(t) for t in data.get("token_strs") or []])
        if offsets is None or len(offsets) != len(ids):
            raise ServedModelError(
                f"The server at {self.base_url} tokenizes text but its token strings do not spell the text back, "
                "so tokens cannot be placed in the passage; name the model's tokenizer with --tokenizer."
            )
        return ids, offsets

    def detokenize(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` as the server's tokenizer spells it."""
        if self._tokenizer is not None:
            return str(self._tokenizer.decode(list(ids), clean_up_tokenization_spaces=False))
        if not ids:
            return ""
        data = self.post("detokenize", {"model": self.name, "tokens": [int(i) for i in ids]}, root=True)
        text = data.get("prompt")
        if not isinstance(text, str):
            raise ServedModelError(f"The server at {self.base_url} did not turn token ids into text (/detokenize).")
        return text

    # -- scoring -----------------------------------------------------------------------------------
    def prompt_logprobs(self, prompts: Sequence[Sequence[int]]) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each token-id prompt: (log-prob, rank) of its tokens after the first, in order."""
        choices = self._completions(prompts, {"max_tokens": 1, "prompt_logprobs": 0})
        return [self._logprobs_and_ranks(prompt, choice) for prompt, choice in zip(prompts, choices, strict=True)]

    def _logprobs_and_ranks(self, prompt: Sequence[int], choice: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        entries = answers.prompt_entries(choice, prompt, self.base_url)
        if entries is None:
            raise ServedModelError(
                f"The server at {self.base_url} returned no per-token log-probs of the prompt (vLLM's "
                "prompt_logprobs); no detector can be computed through it."
            )
        logprobs = np.empty(len(prompt) - 1)
        ranks = np.empty(len(prompt) - 1, dtype=np.int64)
        for i, (token, entry) in enumerate(zip(prompt[1:], entries[1:], strict=True)):
            assert entry is not None  # prompt_entries checked every entry after the first
            logprobs[i], ranks[i] = answers.token_logprob(entry, int(token), i + 2, self.base_url)
        return logprobs, ranks

    # -- the one place a caller's work splits by source (the other is LoadedModel.visit) --------------------------
    def visit(self, here: Callable[[Any], _T], server: Callable[[ServedModel], _T]) -> _T:
        """``server(self)``: a pass as a server computes it (``here`` is for a model loaded in this process)."""
        return server(self)

    def top_alternatives(self, prompts: Sequence[Sequence[int]], k: int) -> list[np.ndarray]:
        """For each token-id prompt: (tokens after the first, k) ids of the model's k likeliest tokens at
        each of those positions, best first (the server's ranks; vLLM returns the top ``k`` exactly)."""
        choices = self._completions(prompts, {"max_tokens": 1, "prompt_logprobs": k})
        return [self._top_ranked(prompt, choice, k) for prompt, choice in zip(prompts, choices, strict=True)]

    def _top_ranked(self, prompt: Sequence[int], choice: dict[str, Any], k: int) -> np.ndarray:
        entries = answers.prompt_entries(choice, prompt, self.base_url)
        if entries is None:
            raise ServedModelError(f"The server at {self.base_url} returned no top-{k} tokens of the prompt.")
        top = np.empty((len(prompt) - 1, k), dtype=np.int64)
        for i, entry in enumerate(entries[1:]):
            assert entry is not None  # prompt_entries checked every entry after the first
            ranked = answers.ranked_tokens(entry, i + 2, self.base_url)
            best = [token for rank, token in ranked if rank <= k]
            if len(best) != k:
                raise ServedModelError(f"The server at {self.base_url} returned {len(best)} of the top {k} tokens.")
            top[i] = best
        return top

    def generate(self, prompts: Sequence[Sequence[int]], counts: Sequence[int]) -> list[tuple[list[int], float]]:
        """Greedy continuations of token-id prompts, ``counts[i]`` tokens each (never stopping at an end
        token, as the in-process decoder does not): (generated ids, log-prob of the first one)."""
        results: list[tuple[list[int], float]] = [([], float("nan"))] * len(prompts)
        for count in sorted(set(counts)):
            chosen = [i for i, c in enumerate(counts) if c == count]
            params = {"max_tokens": count, "ignore_eos": True, "return_token_ids": True, "logprobs": 0}
            for i, choice in zip(chosen, self._completions([prompts[i] for i in chosen], params), strict=True):
                if choice.get("token_ids") is None:
                    raise ServedModelError(
                        f"The server at {self.base_url} generated text but not its token ids (return_token_ids)."
                    )
                ids = answers.token_ids(choice.get("token_ids"), "the generated token ids", self.base_url)
                logprobs = choice.get("logprobs")
                listed = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
                first = listed[0] if isinstance(listed, list) and listed else None
                if len(ids) != count:
                    raise ServedModelError(
                        f"The server at {self.base_url} generated {len(ids)} of the {count} tokens asked for."
                    )
                value = (
                    float("nan")
                    if first is None
                    else answers.logprob_value(first, "the first generated token", self.base_url)
                )
                results[i] = (ids, value)
        return results

    def _completions(self, prompts: Sequence[Sequence[int]], params: dict[str, Any]) -> list[dict[str, Any]]:
        """One greedy completions choice per token-id prompt, in order: ``PROMPTS_PER_REQUEST`` prompts a
        request, ``--concurrency`` requests in flight."""

        def one(chunk: list[list[int]]) -> list[dict[str, Any]]:
            body = {"model": self.name, "prompt": chunk, "temperature": 0.0, **params}
            return answers.choices_of(self.post("completions", body), len(chunk), self.base_url)

        chunks = [
            [list(p) for p in prompts[i : i + PROMPTS_PER_REQUEST]] for i in range(0, len(prompts), PROMPTS_PER_REQUEST)
        ]
        return [choice for answer in self._in_parallel(one, chunks) for choice in answer]

    def _in_parallel(self, work: Callable[[Any], Any], chunks: list[Any]) -> list[Any]:
        if len(chunks) <= 1 or self.endpoint.concurrency <= 1:
            return [work(c) for c in chunks]
        with ThreadPoolExecutor(max_workers=min(self.endpoint.concurrency, len(chunks))) as pool:
            return list(pool.map(work, chunks))

    # -- HTTP --------------------------------------------------------------------------------------
    def post(self, path: str, body: dict[str, Any], *, root: bool = False) -> dict[str, Any]:
        return request_json(self._session(), "POST", self._url(path, root), self.endpoint, body)

    def get(self, path: str, *, root: bool = False) -> dict[str, Any]:
        return request_json(self._session(), "GET", self._url(path, root), self.endpoint)

    def _url(self, path: str, root: bool) -> str:
        """``root``: beside ``/v1`` (vLLM's ``/tokenize``, ``/version``); else under the base URL."""
        return f"{_server_root(self.base_url) if root else self.base_url}/{path}"

    def _session(self) -> Any:
        return thread_session(self._session_local)


def thread_session(local: threading.local) -> Any:
    """One connection pool per thread: requests' sessions are not shared across threads."""
    session = getattr(local, "session", None)
    if session is None:
        session = new_session()
        local.session = session
    return session


def new_session() -> Any:
    import requests

    return requests.Session()


def _api_key(endpoint: Endpoint) -> str | None:
    if not endpoint.api_key_env:
        return None
    key = os.environ.get(endpoint.api_key_env)
    if not key:
        raise ServedModelError(
            f"--api-key-env names {endpoint.api_key_env}, but that environment variable is not set or empty."
        )
    return key


def request_json(
    session: Any,
    method: str,
    url: str,
    endpoint: Endpoint,
    body: dict[str, Any] | None = None,
    *,
    retries: int = RETRIES,
) -> dict[str, Any]:
    """One API call, retried while the server turns it away for now (429, 503: honouring ``Retry-After``)
    or cannot be reached; any other failure is one ``ServedModelError`` line naming the cause.

    ``--timeout`` is one deadline over the whole call, retries and waits included, not each wait for a byte:
    a server that trickles its reply is as late as one that stalls, and a ``Retry-After`` past the deadline is
    not waited for. Connecting asks with ``retries=1``: a server that is not there is said at once, not after
    back-off."""
    import requests

    headers = {}
    key = _api_key(endpoint)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    shown = public_url(url)
    late = ServerFault(f"The server at {shown} did not answer within {endpoint.timeout_s:g} s (--timeout).")
    deadline = time.monotonic() + endpoint.timeout_s
    for attempt in range(retries):
        wait = BACKOFF_S * 2**attempt
        left = deadline - time.monotonic()
        if left <= 0:
            raise late
        try:
            response = session.request(method, url, json=body, headers=headers, timeout=left, stream=True)
            payload = _read_before(response, deadline)
        except (requests.exceptions.Timeout, _Late):
            raise late from None
        except requests.exceptions.ConnectionError:
            if attempt + 1 < retries and time.monotonic() + wait < deadline:
                time.sleep(wait)
                continue
            raise ServerFault(
                f"Cannot reach the server at {shown}: is it running, and is the URL right? A stored run resumes "
                "where it stopped once the server is back."
            ) from None
        if response.status_code in (429, 503):
            if attempt + 1 == retries:
                break  # busy on every try: said below, as the fault it is (never as a missing capability)
            pause = _retry_after(response, wait)
            if time.monotonic() + pause >= deadline:
                raise ServerFault(
                    f"The server at {shown} is busy ({response.status_code}) and asks to wait {pause:g} s, past the "
                    f"{endpoint.timeout_s:g} s --timeout: try again later or give a longer --timeout."
                )
            time.sleep(pause)
            continue
        if response.status_code in (401, 403):
            hint = "check the key in the variable --api-key-env names" if key else "give one with --api-key-env VAR"
            raise ServedModelError(f"The server at {shown} refused the request ({response.status_code}): {hint}.")
        if response.status_code >= 400:
            kind = ServerFault if response.status_code >= 500 else ServedModelError
            refused = kind(f"The server at {shown} answered {response.status_code}: {_error_text(payload)}")
            refused.status = response.status_code
            raise refused
        try:
            data = json.loads(payload)
        except ValueError:
            raise ServerFault(f"The server at {shown} answered with malformed JSON.") from None
        if not isinstance(data, dict):
            raise ServerFault(f"The server at {shown} answered with unexpected JSON.")
        return data
    tries = f"{retries} tries" if retries > 1 else "its one try"
    raise ServerFault(f"The server at {shown} stayed busy after {tries} (429/503): try again later.")


class _Late(Exception):
    """The answer was still arriving when the deadline passed."""


def _read_before(response: Any, deadline: float) -> bytes:
    """The whole body, or ``_Late`` once ``deadline`` passes. The body is read in a helper thread and the
    connection closed at the deadline: a read blocked on a trickle (a byte now and then, each within the
    socket's timeout) cannot outlast it."""
    import requests
    import urllib3

    outcome: dict[str, Any] = {}

    def read() -> None:
        try:
            outcome["body"] = b"".join(response.iter_content(READ_CHUNK_BYTES))
        except BaseException as error:  # handed to the caller's thread
            outcome["error"] = error

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    if reader.is_alive():
        _cut(response)  # the reader's blocked read returns, and it ends
        raise _Late
    response.close()
    error = outcome.get("error")
    if error is not None:
        if isinstance(error, requests.exceptions.ConnectionError) and any(
            isinstance(arg, urllib3.exceptions.ReadTimeoutError) for arg in error.args
        ):  # how requests reports a read that stalled
            raise _Late from None
        raise error
    if time.monotonic() > deadline:
        raise _Late
    return bytes(outcome["body"])


def _cut(response: Any) -> None:
    """Shut the connection's socket down under a read blocked on it (closing the buffered reader instead
    would wait for that very read); the response is closed once the read returns, in its own thread."""
    connection = getattr(response.raw, "connection", None) or getattr(response.raw, "_connection", None)
    sock = getattr(connection, "sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    threading.Thread(target=response.close, daemon=True).start()


def _retry_after(response: Any, default: float) -> float:
    try:
        return max(0.0, float(response.headers.get("Retry-After", default)))
    except ValueError:
        return default


def _error_text(payload: bytes) -> str:
    try:
        data = json.loads(payload)
        message = data.get("error", {}).get("message") if isinstance(data.get("error"), dict) else data.get("message")
        text = str(message or data.get("detail") or data)
    except (ValueError, AttributeError):
        text = payload.decode("utf-8", "replace")
    return " ".join(text.split())[:300]


# -- connecting ------------------------------------------------------------------------------------
def connect(endpoint: Endpoint) -> ServedModel:
    """Reach the server, pick the model and learn what it can compute (``handle.served_handle`` wraps it)."""
    base = checked_base(endpoint)
    session = new_session()
    name, entry = listed_model(session, base, endpoint)
    version = _server_version(session, base, endpoint)
    tokenizer = _local_tokenizer(endpoint.tokenizer) if endpoint.tokenizer else None
    model = ServedModel(
        endpoint=endpoint,
        base_url=base,
        name=name,
        server_version=version,
        model_root=str(entry.get("root") or name),
        # One place is kept for the one token each scoring request must generate.
        max_context=answers.context_length(entry.get("max_model_len"), base, 2048) - 1,
        start_token_id=-1,
        start_token="",
        capabilities=frozenset(),
        _tokenizer=tokenizer,
    )
    if tokenizer is not None:
        _check_tokenizers_agree(model)
    model.start_token_id, model.start_token = _start_token(model, endpoint.start_token)
    model.capabilities = _probe_capabilities(model)
    return model


def checked_base(endpoint: Endpoint) -> str:
    """The endpoint's public base URL once its options are valid: one plain error for each that is not."""
    if endpoint.concurrency < 1:
        raise LeakLensError(f"--concurrency must be at least 1, got {endpoint.concurrency}.")
    if not 0 < endpoint.timeout_s < math.inf:
        raise LeakLensError(f"--timeout must be a positive number of seconds, got {endpoint.timeout_s:g}.")
    base = public_url(endpoint.url)
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LeakLensError(f"--endpoint must be an http(s) URL such as http://host:8000/v1, got {base!r}.")
    if urlsplit(endpoint.url.strip()).password:
        raise LeakLensError(
            "--endpoint must not hold a password: put the key in a variable and name it with --api-key-env."
        )
    return base


def listed_model(session: Any, base: str, endpoint: Endpoint) -> tuple[str, dict[str, Any]]:
    """(the served model's name, its entry in ``/models``): the one asked for, or the only one listed."""
    listed = request_json(session, "GET", f"{base}/models", endpoint, retries=1).get("data") or []
    if not isinstance(listed, list):
        raise answers.fault(base, f"its model list (/models 'data') as {type(listed).__name__} instead of a list")
    names = [str(m.get("id")) for m in listed if isinstance(m, dict)]
    name = _choose_model(endpoint.model, names, base)
    return name, next(m for m in listed if isinstance(m, dict) and str(m.get("id")) == name)


def _choose_model(asked: str | None, names: list[str], base: str) -> str:
    if asked:
        if asked not in names:
            raise ServedModelError(
                f"The server at {base} serves no model '{asked}'; it serves: {', '.join(names) or 'none'}."
            )
        return asked
    if len(names) != 1:
        raise ServedModelError(
            f"The server at {base} serves {len(names)} models ({', '.join(names) or 'none'}); choose one with "
            "--served-model NAME."
        )
    return names[0]


def _server_version(session: Any, base: str, endpoint: Endpoint) -> str | None:
    try:
        return str(request_json(session, "GET", f"{_server_root(base)}/version", endpoint).get("version") or "") or None
    except ServedModelError:
        return None  # not every OpenAI-compatible server has /version


def _local_tokenizer(spec: str) -> Any:
    from transformers import AutoTokenizer

    looks_like_a_path = spec.startswith((".", "/", "~")) or spec.count("/") > 1  # a hub id is "owner/name"
    if looks_like_a_path and not Path(spec).expanduser().is_dir():
        raise ServedModelError(
            f"The tokenizer folder {spec} (--tokenizer) does not exist; give the folder that holds the served "
            "model's tokenizer files."
        )
    try:
        return AutoTokenizer.from_pretrained(spec, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ServedModelError(f"Cannot load the tokenizer '{spec}' (--tokenizer) from this machine: {exc}") from None


TOKENIZER_ADVICE = "name the model's tokenizer with --tokenizer (a local folder or a cached hub id)"


def server_tokens(
    model: ServedModel, text: str, *, add_special_tokens: bool, return_token_strs: bool = False
) -> tuple[dict[str, Any], list[int]]:
    """(the answer, its token ids) of the server's ``/tokenize`` for ``text``, checked: a server without the
    endpoint, or whose answer holds no list of token ids, is one line that points to ``--tokenizer`` (never to
    ``--start-token``, which cannot help when the server's tokens cannot be read at all)."""
    body: dict[str, Any] = {"model": model.name, "prompt": text, "add_special_tokens": add_special_tokens}
    if return_token_strs:
        body["return_token_strs"] = True
    try:
        data = model.post("tokenize", body, root=True)
    except ServerFault:
        raise
    except ServedModelError as exc:
        if exc.status in (404, 405):
            raise ServedModelError(
                f"The server at {model.base_url} has no /tokenize endpoint ({exc.status}), so LeakLens cannot split "
                f"text as the served model does; {TOKENIZER_ADVICE}."
            ) from None
        raise
    try:
        ids = answers.token_ids(data.get("tokens"), "/tokenize's tokens", model.base_url)
    except answers.ServedAnswerError as exc:
        raise answers.ServedAnswerError(f"{str(exc).rstrip('.')}; {TOKENIZER_ADVICE}.") from None
    return data, ids


def _single_id(model: ServedModel, token: str) -> int | None:
    if model._tokenizer is not None:
        ids = model._tokenizer(token, add_special_tokens=False)["input_ids"]
    else:
        ids = server_tokens(model, token, add_special_tokens=False)[1]
    return int(ids[0]) if len(ids) == 1 else None


def _start_token(model: ServedModel, override: str | None) -> tuple[int, str]:
    """The documented start-token rule (``core.engine.start_token``), asked of the server's tokenizer:
    ``--start-token``; else the ``bos`` the tokenizer adds, unless a chat-role marker; else ``<|endoftext|>``."""
    if override:
        token_id = _single_id(model, override)
        if token_id is None:
            raise ServedModelError(f"The served model's tokenizer has no single token '{override}' (--start-token).")
        return token_id, override
    if model._tokenizer is not None:
        bos = model._tokenizer.bos_token
        if bos and not is_chat_role_token(bos):
            return int(model._tokenizer.bos_token_id), str(bos)
    else:
        added = server_tokens(model, "", add_special_tokens=True)[1]
        if len(added) == 1:
            shown = model.post("detokenize", {"model": model.name, "tokens": added}, root=True).get("prompt")
            if shown and not is_chat_role_token(str(shown)):
                return int(added[0]), str(shown)
    token_id = _single_id(model, ENDOFTEXT)
    if token_id is not None:
        return token_id, ENDOFTEXT
    raise ServedModelError("Cannot tell the served model's plain-text start token; name one with --start-token TOKEN.")


def _check_tokenizers_agree(model: ServedModel) -> None:
    """A local tokenizer must split text exactly as the server does, or scores would be of other tokens."""
    try:
        served = server_tokens(model, PROBE_TEXT, add_special_tokens=False)[1]
    except ServerFault:
        raise
    except (ServedModelError, answers.ServedAnswerError):
        return  # the server cannot tokenize: the local tokenizer is all there is
    local = list(model._tokenizer(PROBE_TEXT, add_special_tokens=False)["input_ids"])
    if served != local:
        raise ServedModelError(
            f"The tokenizer given with --tokenizer splits text differently from the server's model "
            f"'{model.name}'; give the tokenizer of the served model."
        )


def _probe_capabilities(model: ServedModel) -> frozenset[str]:
    """What the server computes, asked of it once: prompt log-probs, the top alternatives the neighbourhood
    test needs (a server allowing fewer log-probs per token refuses), then generation."""
    ids, _ = model.tokenize("The capital of France is Paris.")
    found = set()
    causes: list[str] = []
    # A server that is down, late, busy or garbles its answers is that fault, said as it is (ServerFault and
    # answer faults are not caught); a server that refuses a request (4xx) lacks that capability.
    try:
        model.prompt_logprobs([[model.start_token_id, *ids]])
        found.add(TARGET_LOGPROBS)
        model.top_alternatives([[model.start_token_id, *ids]], ALTERNATIVES_PER_POSITION)
        found.add(TOP_ALTERNATIVES)
    except ServerFault:
        raise
    except ServedModelError as exc:
        causes.append(str(exc))
    try:
        model.generate([[model.start_token_id, *ids]], [1])
        found.add(GENERATION)
    except ServerFault:
        raise
    except ServedModelError as exc:
        causes.append(str(exc))
    if not found:
        raise ServedModelError(
            f"The server at {model.base_url} neither returns prompt log-probs nor generates from token ids, so no "
            f"test can run on it: {' '.join(causes)}"
        )
    return frozenset(found)
