"""The fake model server, read by the official `openai` Python SDK (Chat Completions).

Streams a completion with text and two tool calls whose arguments arrive in fragments, and
compares the SDK's final completion with tests/sdk/scenario.yaml. Run by scripts/sdk-check.sh.
"""

import json
import time

import openai

from common import BASE_URL, expect, requests_for, rule, run

client = openai.OpenAI(base_url=f"{BASE_URL}/v1", api_key="sk-sdk-check-dummy", max_retries=2)
MODEL = "gpt-sdk-check"

# The SDK's stream helper only auto-parses strict tools, so the schemas are strict.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "units": {"type": "string"},
                    "days": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["city", "units", "days"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"timezone": {"type": "string"}},
                "required": ["timezone"],
                "additionalProperties": False,
            },
        },
    },
]


def ask(marker, text="go"):
    return [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"{marker} {text}"}]


def scripted(name):
    blocks = rule(name)["respond"]
    text = "".join(b["text"] for b in blocks if "text" in b)
    calls = [b["tool_use"] for b in blocks if "tool_use" in b]
    return text, calls


def streamed_tool_calls_equal_the_script():
    fragments = 0
    with client.chat.completions.stream(
        model=MODEL,
        messages=ask("[case:openai-stream]", "weather and time?"),
        tools=TOOLS,
        stream_options={"include_usage": True},
    ) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.delta":
                fragments += 1
        final = stream.get_final_completion()
    text, calls = scripted("openai-stream")
    choice = final.choices[0]
    expect(choice.message.content, text, "content")
    expect(choice.finish_reason, "tool_calls", "finish_reason")
    got = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls]
    expect(got, [(c["id"], c["name"], c["input"]) for c in calls], "tool calls")
    expect([c.function.parsed_arguments for c in choice.message.tool_calls], [c["input"] for c in calls], "parsed")
    assert fragments > 2 * len(calls), f"arguments came in only {fragments} fragments"
    usage = rule("openai-stream")["usage"]
    expect(
        (final.usage.prompt_tokens, final.usage.completion_tokens, final.usage.total_tokens),
        (usage["input_tokens"], usage["output_tokens"], usage["input_tokens"] + usage["output_tokens"]),
        "usage",
    )
    expect(final.model, MODEL, "model echoed")


def sdk_retries_a_429_after_retry_after_ms():
    scripted_ms = rule("openai-retry-429")["fault"]["retry_after_ms"]
    started = time.monotonic()
    stream = client.chat.completions.create(model=MODEL, messages=ask("[case:openai-retry]"), stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    waited = time.monotonic() - started
    expect(text, scripted("openai-retry-ok")[0], "content after retry")
    log = requests_for("[case:openai-retry]")
    expect([(r["status"], r["rule"]) for r in log], [(429, "openai-retry-429"), (200, "openai-retry-ok")], "requests")
    assert waited >= scripted_ms / 1000 * 0.95, f"retried after {waited:.2f}s, retry-after-ms was {scripted_ms}"
    expect(dict(log[0]["headers"]).get("authorization"), "<redacted>", "bearer token redacted in the log")


def create_returns_the_whole_completion():
    completion = client.chat.completions.create(model=MODEL, messages=ask("[case:openai-create]"))
    expect(completion.choices[0].message.content, scripted("openai-create")[0], "content")
    expect(completion.choices[0].finish_reason, "stop", "finish_reason")
    usage = rule("openai-create")["usage"]
    expect((completion.usage.prompt_tokens, completion.usage.completion_tokens), (usage["input_tokens"], usage["output_tokens"]), "usage")


def unmatched_request_is_a_clear_400():
    try:
        client.chat.completions.create(model=MODEL, messages=ask("[case:none]", "no rule for this"))
    except openai.BadRequestError as e:
        assert "no scenario rule matched" in e.message, e.message
        return
    raise AssertionError("an unmatched request succeeded")


if __name__ == "__main__":
    run(
        [
            streamed_tool_calls_equal_the_script,
            sdk_retries_a_429_after_retry_after_ms,
            create_returns_the_whole_completion,
            unmatched_request_is_a_clear_400,
        ]
    )
