"""Tool calls written in the model's text (``--text-tools``), for models served without native tool calling.

The model gets no ``tools`` parameter. Instead the system prompt ends with a block that
lists the tools and asks for ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``;
the runner finds the calls in the reply, runs them through the same session (``Episode``)
in the order written, and answers with one user message of
``<tool_result name="...">...</tool_result>`` blocks.

The parser accepts the forms models commonly produce, first match wins:

1. ``<tool_call>JSON</tool_call>`` tags (Hermes / Qwen style; a last tag left open at the
   end of the reply is accepted: generation often stops at ``</tool_call>``);
2. fenced code blocks tagged ``json`` or ``tool_call`` holding a call object or a list of them;
3. bare call objects ``{"name": ..., "arguments": {...}}`` in the text (``parameters`` is
   accepted for ``arguments``, as Llama 3 emits it);
4. Python-style calls ``tool(key="value", n=3)``, alone or as a list (Llama 3.2, Gemma),
   read with ``ast`` (literals only, nothing is evaluated).

Forms 1 and 2 are explicit: what they hold is a call even when broken, and a broken one
(not JSON, no name, arguments that are not an object) goes back to the model as an error,
never reaches the server and costs nothing, exactly like malformed native arguments. An
explicit call to an unknown tool goes to the server, which refuses it for free, as a native
one would. Forms 3 and 4 are recognised only for the session's tool names, so prose that
happens to contain JSON or parentheses is not taken for a call.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass


@dataclass
class TextCall:
    name: str
    arguments: dict | None  # None when malformed
    raw: str  # the text the call was read from
    problem: str | None = None  # why it cannot be run (malformed)


TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
FENCE = re.compile(r"```(?:json|tool_call|tool_code)\s*\n(.*?)```", re.S | re.I)
PY_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def tools_block(tools: list) -> str:
    """The part of the system prompt that teaches the text format (``tools``: the session's MCP tools)."""
    lines = []
    for tool in tools:
        schema = tool.input_schema or {}
        props, required = schema.get("properties") or {}, set(schema.get("required") or [])
        params = []
        for pname, spec in props.items():
            kind = spec.get("type") or ("string" if "enum" in spec else "value")
            default = "" if pname in required else f" = {json.dumps(spec.get('default'))}"
            params.append(f"{pname}: {kind}{default}")
        lines.append(f"- {tool.name}({', '.join(params)}): {tool.description or ''}")
    return (
        "\n\n## How to call tools\n"
        "Call a tool by writing, anywhere in your reply:\n"
        '<tool_call>{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>\n'
        "You may write several calls in one reply; they run in the order written. The results come back in the "
        'next message as <tool_result name="TOOL_NAME">...</tool_result> blocks. The tools:\n' + "\n".join(lines)
    )


def results_message(results: list[tuple[str, str]]) -> dict:
    """One user message answering the calls of a reply: ``(tool name, result text)`` in order."""
    blocks = [f'<tool_result name="{name}">\n{text}\n</tool_result>' for name, text in results]
    return {"role": "user", "content": "\n\n".join(blocks)}


def parse_tool_calls(text: str, known: set[str]) -> list[TextCall]:
    """The tool calls written in ``text`` (see the module docstring); [] when there are none."""
    text = text or ""
    tagged = TAG.findall(text)
    if tagged:
        return [call for body in tagged for call in _explicit(body)]
    fenced = [body for body in FENCE.findall(text) if _looks_like_call(body, known)]
    if fenced:
        return [call for body in fenced for call in _explicit(body)]
    bare = _bare_objects(text, known)
    if bare:
        return bare
    return _python_calls(text, known)


def _explicit(body: str) -> list[TextCall]:
    """A tag or fence body: a call object, or a list of them; anything else is one malformed call."""
    body = body.strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        pythonic = _python_calls(body, None)
        if pythonic:
            return pythonic
        return [TextCall(_guess_name(body), None, body, f"not valid JSON ({exc.msg} at column {exc.colno})")]
    items = value if isinstance(value, list) else [value]
    return [_from_object(item, body) for item in items] or [TextCall("?", None, body, "an empty list, not a call")]


def _from_object(obj, raw: str) -> TextCall:
    if not isinstance(obj, dict):
        return TextCall("?", None, raw, f"a JSON {type(obj).__name__}, not a call object")
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return TextCall("?", None, raw, 'no "name" naming the tool')
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):  # some models double-encode the arguments
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            return TextCall(name, None, raw, f'"arguments" is a string that is not JSON ({exc.msg})')
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return TextCall(name, None, raw, f'"arguments" is a JSON {type(args).__name__}, not an object')
    return TextCall(name.strip(), args, raw)


def _guess_name(body: str) -> str:
    m = re.search(r'"name"\s*:\s*"([^"]+)"', body)
    return m.group(1) if m else "?"


def _looks_like_call(body: str, known: set[str]) -> bool:
    return '"name"' in body or any(re.search(rf"\b{re.escape(n)}\s*\(", body) for n in known)


def _bare_objects(text: str, known: set[str]) -> list[TextCall]:
    """Call objects for known tools anywhere in the text (balanced-brace scan; JSON strings respected)."""
    calls = []
    decoder = json.JSONDecoder()
    i = 0
    while (i := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1
            continue
        if isinstance(value, dict) and value.get("name") in known and ("arguments" in value or "parameters" in value):
            calls.append(_from_object(value, text[i:end]))
            i = end
        else:
            i += 1
    return calls


def _python_calls(text: str, known: set[str] | None) -> list[TextCall]:
    """``tool(k=v, ...)`` calls (of known tools, or of any name when ``known`` is None), literals only."""
    calls = []
    for m in PY_CALL.finditer(text):
        name = m.group(1)
        if known is not None and name not in known:
            continue
        end = _closing_paren(text, m.end() - 1)
        if end is None:
            continue
        source = text[m.start(1) : end + 1]
        try:
            node = ast.parse(source, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.Call) or node.args:
            continue
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
        except (ValueError, SyntaxError):
            calls.append(TextCall(name, None, source, "arguments that are not plain values (strings, numbers, lists)"))
            continue
        calls.append(TextCall(name, args, source))
    return calls


def _closing_paren(text: str, start: int) -> int | None:
    """Index of the parenthesis closing the one at ``start`` (quotes respected), or None."""
    depth, quote, i = 0, None, start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def malformed_text_message(call: TextCall) -> str:
    return (
        f"Error: your tool call {call.raw[:300]!r} could not be read: {call.problem}. It was not executed and cost "
        'nothing. Write it again as <tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>.'
    )
