"""A native Gemini tool-use loop on the timeline service, offline.

The loop is what an agent runs against the real API: render the conversation in Gemini's own
format (``format="gemini_contents"``: ``contents`` and ``config``), call
``client.models.generate_content(model=…, contents=…, config={**config, "tools": …})``, store the
reply to ``record_reply`` (its thoughts, thought signatures, text and function calls stored as they
came, its usage reported on the render), run the tools and ``record_tool_results``, repeat. Here the model is
scripted: the real ``google-genai`` SDK talks to a mocked HTTP transport, which checks every request
(the SDK's own ``Content`` / ``GenerateContentConfig`` types and Gemini's rules: alternation, the
last content the user's, every ``function_call`` answered by a ``function_response`` with its name
and id in the next user content) and answers 400 on a violation, as the API does.

Like Gemini 3, the scripted model thinks: each reply starts with a thought part, and its first
function call carries a ``thought_signature``; a request whose current turn has a function call
without the signature it was sent with is a 400 ("function call is missing a thought_signature").
``record_reply`` stores each signature as a ``react.thinking`` block right before the call that
carried it; the render puts it back on that call.

After the last answer the agent renders once more without a new question (a follow-up call): the
history ends with the model's answer, so the render ends with a user message of the
``continue_text`` setting (``ending: continue_text``) and the model takes it.

Run it against ``make run`` from the repository root::

    export TIMELINE_API_KEY=…   # manage.py create_api_key
    .venv/bin/python docs/examples/gemini_tool_loop.py
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx2  # google-genai uses httpx2 when it is installed
from google import genai
from google.genai import errors, types
from timeline_client import TimelineClient, gemini_tool_name, provider_tool_name

# The repository's checks of a request (not part of the client): the SDK types and the rules.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from timeline_app.rendering.native.validate import violations
from timeline_bench.sdk_types import sdk_type_errors

MODEL = "gemini-3-flash-preview"
SYSTEM = "You are an order-support agent. Look orders up before you answer; answer in one sentence."
DECLARED = ["orders.lookup", "orders.history"]
TOOLS = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name=gemini_tool_name(provider_tool_name(name)),
                description=f"{name}: an order's details by its number.",
                parameters_json_schema={
                    "type": "object",
                    "properties": {"order": {"type": "string"}},
                    "required": ["order"],
                },
            )
            for name in DECLARED
        ]
    )
]
ORDER = re.compile(r"\b10\d\d\b")
QUESTIONS = ["Where is order 2001? It is 1001.", "And order 1002?", "Compare 1003 and 1004."]


def _error(message: str) -> httpx2.Response:
    return httpx2.Response(
        400, json={"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    )


class ScriptedGemini:
    """``models.generate_content`` behind a mock transport: checks each request, then answers with
    parallel calls of both tools on a turn's first call and with the answer once they are
    answered."""

    def __init__(self) -> None:
        self.calls = 0
        self.signatures: dict[str, str] = {}  # function call id -> the signature sent with it
        self.signed_calls_back = 0  # requests whose current turn sent every signature back
        self.previous: list[str] = []  # the last request's contents, one JSON text each

    def check_signatures(self, contents: list[dict[str, Any]]) -> tuple[str, int]:
        """Gemini 3's rule: in the current turn (since the last user text), the first function call
        of each model content carries the signature it was sent with. Returns the problem (empty:
        none) and how many signed calls came back."""
        start = max(
            (
                i
                for i, c in enumerate(contents)
                if c["role"] == "user" and any("text" in p for p in c["parts"])
            ),
            default=0,
        )
        checked = 0
        for content in contents[start:]:
            calls = [p for p in content["parts"] if "function_call" in p]
            if content["role"] != "model" or not calls:
                continue
            first = calls[0]
            sent = self.signatures.get(first["function_call"]["id"])
            if sent is not None and first.get("thought_signature") != sent:
                return f"function call {first['function_call']['id']} is missing a thought_signature", 0
            checked += 1
        return "", checked

    def usage(self, contents: list[dict[str, Any]]) -> dict[str, int]:
        """Implicit caching, roughly: the contents shared with the previous request are cached
        once they reach 1,024 tokens (a quarter of their JSON's characters)."""
        texts = [json.dumps(c, sort_keys=True) for c in contents]
        shared = 0
        for mine, theirs in zip(texts, self.previous, strict=False):
            if mine != theirs:
                break
            shared += len(mine) // 4
        self.previous = texts
        prompt = sum(len(t) for t in texts) // 4
        return {
            "promptTokenCount": prompt,
            "cachedContentTokenCount": shared if shared >= 1024 else 0,
            "candidatesTokenCount": 20,
            "thoughtsTokenCount": 30,
        }

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        # The wire is camelCase JSON; read it back through the SDK's own types (snake_case dicts).
        try:
            contents = [
                types.Content.model_validate(c).model_dump(mode="json", exclude_none=True)
                for c in body["contents"]
            ]
            system = types.Content.model_validate(body.get("systemInstruction", {"parts": []}))
        except ValueError as exc:
            return _error(f"invalid request: {exc}")
        config = (
            {"system_instruction": system.model_dump(mode="json", exclude_none=True)} if system.parts else {}
        )
        checked = {"contents": contents, "config": config}
        problems = violations("gemini_contents", checked) + sdk_type_errors("gemini_contents", checked)
        signature_problem, signed = self.check_signatures(contents)
        problems += [signature_problem] if signature_problem else []
        if problems:
            return _error(problems[0])
        self.calls += 1
        self.signed_calls_back += signed > 0
        last = contents[-1]["parts"]
        answered = any("function_response" in part for part in last)
        order = (ORDER.findall(json.dumps(contents)) or ["?"])[-1]
        thought = {"text": f"Call {self.calls}: the user asks about order {order}.", "thought": True}
        if answered or last[-1].get("text") == "Continue.":
            parts = [thought, {"text": f"Order {order} ships tomorrow."}]
        else:
            parts = [thought]
            for k, tool in enumerate(TOOLS[0].function_declarations or []):
                call_id = f"fc_{self.calls}_{k}"
                part: dict[str, Any] = {
                    "functionCall": {"id": call_id, "name": tool.name, "args": {"order": order}}
                }
                if k == 0:  # parallel calls: only the first carries the signature
                    signature = base64.b64encode(f"gemini-sig-{call_id}".encode()).decode()
                    self.signatures[call_id] = signature
                    part["thoughtSignature"] = signature
                parts.append(part)
        return httpx2.Response(
            200,
            json={
                "candidates": [
                    {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
                ],
                "usageMetadata": self.usage(contents),
                "modelVersion": MODEL,
                "responseId": f"resp_{self.calls}",
            },
        )


def run_tool(name: str, order: str) -> str:
    return "\n".join(f"{name} order {order} line {i}: parcel scanned at hub {i % 7}" for i in range(40))


api = TimelineClient(
    os.environ.get("TIMELINE_API_URL", "http://127.0.0.1:8000"), os.environ["TIMELINE_API_KEY"]
)
model = ScriptedGemini()
client = genai.Client(
    api_key="test",
    http_options=types.HttpOptions(httpx_client=httpx2.Client(transport=httpx2.MockTransport(model))),
)
conv = api.create_conversation(title="Offline Gemini tool loop")["id"]


def call_model(turn: int | str) -> tuple[dict[str, Any], types.GenerateContentResponse]:
    """Render, call the model, store its reply as it came (its usage reported on the render)."""
    kwargs = api.render(conv, format="gemini_contents", system=SYSTEM, model=MODEL)
    response = client.models.generate_content(
        model=MODEL, contents=kwargs["contents"], config={**kwargs["config"], "tools": TOOLS}
    )
    reply = api.record_reply(conv, response, render=kwargs, tools=DECLARED)
    usage = reply["usage"]
    assert usage is not None
    tokens = usage["tokens"]
    forecast = kwargs.render["usage_forecast"] or {}
    print(
        f"turn {turn}: {len(kwargs['contents'])} contents, ending {kwargs.render['ending']}; billed cached "
        f"{tokens['cache_read']} of {tokens['cache_read'] + tokens['uncached_input']} "
        f"(forecast {forecast.get('cache_read_input_tokens')} of {forecast.get('input_tokens')})"
    )
    return reply, response


for turn, question in enumerate(QUESTIONS, start=1):
    api.start_turn(conv, question)
    while True:
        reply, response = call_model(turn)
        if not reply["tool_calls"]:
            print(f"turn {turn}: answer: {response.text}")
            break
        # Every call's result, by call id, in the turn of its call.
        api.record_tool_results(
            conv, {c["tool_call_id"]: run_tool(c["name"], c["input"]["order"]) for c in reply["tool_calls"]}
        )

# A follow-up call with no new question: the history ends with the model's answer.
reply, response = call_model("follow-up")
print(f"follow-up: answer: {response.text}")

# A render that keeps the model's answer last (prefill) is what Gemini refuses here.
prefilled = api.render(conv, format="gemini_contents", system=SYSTEM, prefill=True)
try:
    client.models.generate_content(model=MODEL, **prefilled)
except errors.ClientError as exc:
    print(f"a prefill render ({prefilled.render['ending']}) was refused: {exc.code}")

print(f"{model.signed_calls_back} requests sent the thought signatures back on their function calls")
print(f"{model.calls} model calls, every request valid")
