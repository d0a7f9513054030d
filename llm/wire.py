"""What the agents put on the wire: message shapes every OpenAI-compatible server accepts, and sampling settings.

Shapes. OpenAI's chat-completions format lets an assistant message that carries ``tool_calls`` have
``content: null``, and a tool message have a list of text parts. Other servers are stricter: the stock
``llama_cpp.server`` answers HTTP 500 to both (docs/local-models.md). The shapes below are valid in OpenAI's
format too (``content`` is "string or array", and a string may be empty), so the agents always send them:
an assistant turn's text as a string (``""`` when it had only tool calls), a tool result as one text.

Sampling. Nothing is sent for temperature, top-p, top-k or the seed unless the run sets them (the endpoint's
own defaults apply, as in the reference harness); each call's generation is capped at ``max_tokens``
(16,384 unless set; ``None`` sends no cap).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

#: The reference harness's cap on one call's generated tokens.
DEFAULT_MAX_TOKENS = 16_384

# OpenAI's reasoning models refuse ``max_tokens`` and take ``max_completion_tokens`` (the reference harness sends
# it to gpt-5*); every other server takes ``max_tokens``.
_COMPLETION_TOKENS_MODELS = ("gpt-5", "o1", "o3", "o4")


@dataclass(frozen=True)
class Sampling:
    """Per-call generation settings of a run (``None``: not sent)."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    seed: int | None = None

    def __post_init__(self):
        wrong = []
        if self.temperature is not None and not self.temperature >= 0:
            wrong.append(f"temperature {self.temperature} (must be 0 or more)")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            wrong.append(f"top-p {self.top_p} (must be more than 0 and at most 1)")
        if self.top_k is not None and self.top_k < 1:
            wrong.append(f"top-k {self.top_k} (must be 1 or more)")
        if self.max_tokens is not None and self.max_tokens < 1:
            wrong.append(f"generated-token cap {self.max_tokens} (must be 1 or more, or none for no cap)")
        if wrong:
            raise ValueError("sampling settings out of range: " + "; ".join(wrong))

    def as_dict(self) -> dict:
        return asdict(self)

    def cap_key(self, model: str) -> str:
        bare = model.rsplit("/", 1)[-1].lower()
        return "max_completion_tokens" if bare.startswith(_COMPLETION_TOKENS_MODELS) else "max_tokens"

    def body(self, model: str) -> dict:
        """The request-body fields: only the settings that are set. ``top_k`` is not an OpenAI parameter; the
        servers that sample with it (vLLM, SGLang, llama.cpp's servers) read it from the body."""
        out: dict = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.top_k is not None:
            out["top_k"] = self.top_k
        if self.seed is not None:
            out["seed"] = self.seed
        if self.max_tokens is not None:
            out[self.cap_key(model)] = self.max_tokens
        return out


def tool_text(content) -> str:
    """A tool message's content as one text: text parts joined by newlines, other parts dropped."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, dict):
            if part.get("type") in ("text", "input_text", "output_text"):
                parts.append(str(part.get("text", "")))
        elif isinstance(part, str):
            parts.append(part)
    return "\n".join(parts)


def portable_messages(messages: list) -> list:
    """``messages`` in the shapes every server accepts: an assistant message's ``content`` null -> ``""``, a tool
    message's list content -> one text. Messages already in shape are passed through as they are (no copy)."""
    out = None
    for i, m in enumerate(messages):
        fixed = m
        if isinstance(m, dict):
            role = m.get("role")
            if role == "assistant" and m.get("content") is None:
                fixed = {**m, "content": ""}
            elif role == "tool" and not isinstance(m.get("content"), str):
                fixed = {**m, "content": tool_text(m.get("content"))}
        if fixed is not m and out is None:
            out = list(messages[:i])
        if out is not None:
            out.append(fixed)
    return messages if out is None else out
