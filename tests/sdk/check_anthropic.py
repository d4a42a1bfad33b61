"""The fake model server, read by the official `anthropic` Python SDK.

Each check streams (or creates) a message through the SDK and compares what the SDK rebuilt
with what tests/sdk/scenario.yaml scripted. Run by scripts/sdk-check.sh with FAKE_MODEL_URL set.
"""

import json
import time

import anthropic

from common import BASE_URL, expect, requests_for, rule, run

API_KEY = "sk-ant-sdk-check-dummy"
client = anthropic.Anthropic(base_url=BASE_URL, api_key=API_KEY, max_retries=2)
MODEL = "claude-sdk-check"


def scripted_blocks(name):
    """The content blocks a rule scripts, as the API would return them."""
    blocks = []
    for b in rule(name)["respond"]:
        if "thinking" in b:
            blocks.append({"type": "thinking", "thinking": b["thinking"], "signature": b["signature"]})
        elif "text" in b:
            blocks.append({"type": "text", "text": b["text"]})
        elif "tool_use" in b:
            t = b["tool_use"]
            blocks.append({"type": "tool_use", "id": t["id"], "name": t["name"], "input": t.get("input", {})})
    return blocks


def blocks_of(message):
    return [b.model_dump(exclude_none=True) for b in message.content]


def usage_of(message):
    u = message.usage
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
    }


def ask(marker, text="go"):
    return [{"role": "user", "content": f"{marker} {text}"}]


def streamed_message_equals_the_script():
    with client.messages.stream(
        model=MODEL,
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 1024},
        system="You are a careful coding agent.",
        tools=[{"name": "Read", "description": "Reads a file", "input_schema": {"type": "object"}}],
        messages=ask("[case:anthropic-stream]", "read the config"),
    ) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    expected = scripted_blocks("anthropic-stream")
    expect(blocks_of(final), expected, "content blocks")
    expect(streamed_text, expected[1]["text"], "text_stream")
    expect(final.stop_reason, "tool_use", "stop_reason")
    expect(final.model, MODEL, "model echoed")
    expect(final.role, "assistant", "role")
    expect(usage_of(final), rule("anthropic-stream")["usage"], "usage")
    assert final.id.startswith("msg_"), final.id


def sdk_retries_a_429_after_retry_after():
    scripted_wait = rule("anthropic-retry-429")["fault"]["retry_after"]
    started = time.monotonic()
    with client.messages.stream(model=MODEL, max_tokens=100, messages=ask("[case:anthropic-retry]")) as stream:
        final = stream.get_final_message()
    waited = time.monotonic() - started
    expect(blocks_of(final), scripted_blocks("anthropic-retry-ok"), "content after retry")
    log = requests_for("[case:anthropic-retry]")
    expect([(r["status"], r["rule"]) for r in log], [(429, "anthropic-retry-429"), (200, "anthropic-retry-ok")], "requests")
    # The SDK's own backoff would be under a second; waiting the scripted seconds shows it
    # read our `retry-after` header.
    assert waited >= scripted_wait * 0.95, f"retried after {waited:.2f}s, retry-after was {scripted_wait}s"
    # The SDK sends its key as `x-api-key` or `authorization`, depending on its version;
    # either way the log shows it redacted and never in clear.
    headers = dict(log[0]["headers"])
    credentials = [headers[h] for h in ("x-api-key", "authorization") if h in headers]
    expect(credentials, ["<redacted>"], "credential redacted in the log")
    assert API_KEY not in json.dumps(log), "the API key leaked into the request log"


def create_returns_the_whole_message():
    message = client.messages.create(model=MODEL, max_tokens=100, messages=ask("[case:anthropic-create]"))
    expect(blocks_of(message), scripted_blocks("anthropic-create"), "content blocks")
    expect(message.stop_reason, "tool_use", "stop_reason")
    scripted = rule("anthropic-create")["usage"]
    expect(
        usage_of(message),
        {**scripted, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        "usage",
    )


def sse_error_event_raises():
    try:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=ask("[case:anthropic-sse-error]")) as stream:
            for _ in stream:
                pass
    except anthropic.APIStatusError as e:
        fault = rule("anthropic-sse-error")["fault"]["sse_error"]
        assert fault["message"] in str(e), str(e)
        expect(e.body["error"]["type"], fault["type"], "error type")
        return
    raise AssertionError("the SSE error event did not raise")


def unmatched_request_is_a_clear_400():
    try:
        client.messages.create(model=MODEL, max_tokens=100, messages=ask("[case:none]", "no rule for this"))
    except anthropic.BadRequestError as e:
        expect(e.body["error"]["type"], "invalid_request_error", "error type")
        assert "no scenario rule matched" in e.message, e.message
        assert "no rule for this" in e.message, e.message
        return
    raise AssertionError("an unmatched request succeeded")


if __name__ == "__main__":
    run(
        [
            streamed_message_equals_the_script,
            sdk_retries_a_429_after_retry_after,
            create_returns_the_whole_message,
            sse_error_event_raises,
            unmatched_request_is_a_clear_400,
        ]
    )
