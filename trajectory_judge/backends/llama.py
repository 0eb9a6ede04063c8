"""What only llama.cpp's ``llama-server`` offers an OpenAI-compatible client: mixed into :class:`~.clients.OpenAIClient`.

Finding out whether the server is llama-server (its ``GET /props`` answers with llama-server's
own fields: ``default_generation_settings`` as an object and ``total_slots`` as an integer; any
other JSON is another server), counting a prompt's tokens
with its tokenizer before sending, checking its context size, and saving and restoring a slot's
prompt cache (``--slot-save-path``). Another server is never sent any of these requests, and
none of them carries the API key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import httpx

from trajectory_judge.backends.errors import ServerRejectedError


def is_llama_props(props: Any) -> bool:
    """Whether a ``/props`` answer is llama-server's: ``default_generation_settings`` an object, ``total_slots`` an int."""
    if not isinstance(props, dict):
        return False
    slots = props.get("total_slots")
    return (
        isinstance(props.get("default_generation_settings"), dict)
        and isinstance(slots, int)
        and not isinstance(slots, bool)
    )


class LlamaServerExtras:
    """llama-server's own endpoints, for a client with ``_http``, ``_chat``, ``_messages``, ``model``,
    ``num_ctx``, ``max_tokens``, ``prefix_slots``, ``slot_id`` and ``server_info``."""

    _llama_cpp: bool | None
    _props: dict[str, Any] | None
    _can_tokenize: bool | None
    _checked_ctx: bool
    _primed: dict[str, str]
    _http: httpx.Client
    _chat: Any
    # the client's own, declared (never assigned) here so that the mixin's uses of them are checked
    model: str
    num_ctx: int
    max_tokens: int
    prefix_slots: tuple[str, ...]
    slot_id: int
    _messages: Callable[[str], list[dict[str, str]]]
    server_info: Callable[[], dict[str, Any]]

    @property
    def llama_cpp(self) -> bool:
        """Whether the server is llama.cpp's ``llama-server`` (as configured, or its ``/props`` answered)."""
        if self._llama_cpp is not None:
            return self._llama_cpp
        found = self._read_props() is not None
        if self._props is not None:  # a definite answer (not a connection failure): keep it
            self._llama_cpp = found
        return found

    def _read_props(self) -> dict[str, Any] | None:
        """llama-server's ``GET /props`` (kept once answered), or None from any other server (whatever JSON it sends)."""
        if self._props is None:
            try:
                r = self._http.get("/props")
            except httpx.HTTPError:
                return None  # unreachable now: ask again next time
            try:
                props = r.json() if r.status_code == 200 else None
            except ValueError:
                props = None
            self._props = props if is_llama_props(props) else {}
        return self._props or None

    def count_tokens(self, prompt: str) -> int | None:
        """Prompt tokens as the server's tokenizer counts them (chat template included), or None."""
        if self._can_tokenize is False or not self.llama_cpp:
            return None
        try:
            text = prompt
            t = self._http.post("/apply-template", json={"messages": self._messages(prompt)})
            if t.status_code == 200 and isinstance(t.json().get("prompt"), str):
                text = t.json()["prompt"]
            r = self._http.post("/tokenize", json={"content": text, "add_special": True})
            tokens = r.json().get("tokens") if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            tokens = None
        self._can_tokenize = isinstance(tokens, list)
        if not isinstance(tokens, list):
            return None
        # without /apply-template, allow a small margin for the chat template's tokens
        return len(tokens) + (0 if text is not prompt else 32)

    def _check_server_ctx(self) -> None:
        if self._checked_ctx:
            return
        self._checked_ctx = True
        n_ctx = self.server_info().get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx != self.num_ctx:
            raise ServerRejectedError(
                f"the server's context size is {n_ctx} but num_ctx={self.num_ctx}; start it with -c {self.num_ctx}"
            )

    # -- saved-prefix caching (llama-server --slot-save-path) --------------------------------
    def _slot(self, action: str, filename: str | None = None) -> None:
        body = {"filename": filename} if filename else {}
        r = self._http.post(f"/slots/{self.slot_id}", params={"action": action}, json=body)
        if r.status_code != 200:
            raise ServerRejectedError(
                f"llama-server slot {action} failed (HTTP {r.status_code}: {r.text[:200]}); "
                "saved-prefix caching needs llama-server started with --slot-save-path DIR"
            )

    def _restore_prefix(self, prompt: str) -> None:
        """Put the slot in the same state before every request: the saved cache of the prompt's prefix.

        Each registered prefix is computed once per client from an erased slot and saved; before
        each request its state is restored, so the reuse never depends on the previous request.
        A prompt with no registered prefix starts from an erased slot.
        """
        prefix = next((p for p in self.prefix_slots if prompt.startswith(p)), None)
        if prefix is None:
            self._slot("erase")
            return
        name = self._primed.get(prefix)
        if name is None:
            name = "tj-prefix-" + hashlib.sha256(prefix.encode("utf-8")).hexdigest()[:16] + ".bin"
            self._slot("erase")
            self._chat(
                {
                    "model": self.model,
                    "messages": self._messages(prefix),
                    "max_tokens": 1,
                    "temperature": 0.0,
                    "seed": 0,
                    "cache_prompt": True,
                }
            )
            self._slot("save", name)
            self._primed[prefix] = name
        self._slot("restore", name)
