"""Summarises a `fleet -p --output-format stream-json --verbose` run for real-model-check.sh.

usage: real-model-summary.py <stream-json file> <the server's context size, or ?>

Prints one labelled line per fact (tool calls, retries, the result, usage, whether the last reply
filled the server's context, the limits fleet attributed to the model). Exits 3 when the run
printed no result line: fleet then did not finish on its own.
"""
import json, sys
lines, bad = [], 0
with open(sys.argv[1], errors="replace") as f:
    for raw in f:
        raw = raw.strip()
        if not raw:
            continue
        try:
            lines.append(json.loads(raw))
        except ValueError:
            bad += 1
n_ctx = int(sys.argv[2]) if sys.argv[2].isdigit() else None

def clip(value, n=120):
    text = value if isinstance(value, str) else json.dumps(value)
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= n else text[: n - 1] + "…"

def counted(usage):
    if usage is None:
        return None
    return sum(usage.get(k) or 0 for k in
               ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"))

init = next((l for l in lines if l.get("type") == "system" and l.get("subtype") == "init"), {})
calls, results, retries, replies = [], [], [], {}
for l in lines:
    if l.get("type") == "assistant":
        msg = l.get("message") or {}
        # One line per content block, each with its message's usage so far: keep the last.
        replies[msg.get("id")] = msg.get("usage")
        for block in msg.get("content") or []:
            if block.get("type") == "tool_use":
                calls.append(f"{block.get('name')}({clip(block.get('input'), 80)})")
    elif l.get("type") == "user":
        for block in (l.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results.append(("error: " if block.get("is_error") else "ok: ") + clip(block.get("content"), 80))
    elif l.get("type") == "system" and l.get("subtype") == "api_retry":
        retries.append(f"{l.get('attempt')}/{l.get('max_retries')} {clip(l.get('error'), 100)}")
result = next((l for l in reversed(lines) if l.get("type") == "result"), None)
print(f"lines       {len(lines)} JSON, {bad} not JSON; init model {init.get('model')!r}, "
      f"tools {init.get('tools')}, agents {init.get('agents')}")
print(f"tool calls  {len(calls)}: {'; '.join(calls) if calls else 'none'}")
for r in results:
    print(f"  result    {r}")
print(f"api_retry   {len(retries)}" + "".join(f"\n  retry     {r}" for r in retries))
if result is None:
    print("result      NONE (no result line)")
    sys.exit(3)
usage = result.get("usage")
if usage is None:
    usage_text = "not reported (null)"
elif not any(usage.get(k) for k in ("input_tokens", "output_tokens")):
    usage_text = f"zeros: {clip(usage, 160)}"
else:
    usage_text = (f"{usage.get('input_tokens')} in (+{usage.get('cache_read_input_tokens', 0)} cached), "
                  f"{usage.get('output_tokens')} out")
print(f"result      subtype {result.get('subtype')}, is_error {result.get('is_error')}, "
      f"stop_reason {result.get('stop_reason')}, terminal_reason {result.get('terminal_reason')}, "
      f"turns {result.get('num_turns')}, cost {result.get('total_cost_usd')}")
print(f"usage       {usage_text}; {len(replies)} replies: {clip(list(replies.values()), 200)}")
last = list(replies.values())[-1] if replies else None
used = counted(last)
if n_ctx and used:
    filled = "yes" if used >= n_ctx - 1 else "no"
    print(f"context     the last reply used {used} of the server's {n_ctx} tokens (filled: {filled})")
for name, mu in (result.get("modelUsage") or {}).items():
    print(f"modelUsage  {name!r}: contextWindow {mu.get('contextWindow')}, "
          f"maxOutputTokens {mu.get('maxOutputTokens')}, costUSD {mu.get('costUSD')}")
agents = [(a.get("agent_id"), a.get("model")) for a in result.get("usage_by_agent") or []]
print(f"by agent    {agents}")
if result.get("errors"):
    print(f"errors      {clip(result.get('errors'), 240)}")
print(f"answer      {clip(result.get('result'), 200)}")
