"""The Python Claude Agent SDK (claude-agent-sdk, pinned by scripts/agent-sdk-check.sh) drives
the real fleet binary (`cli_path`) against the fake model server.

Each check runs in a fresh git repository with its own home, sends a prompt carrying its
marker (see scenario.yaml), and asserts what an SDK user would rely on: the messages the SDK
yields, the callbacks it makes, the files on disk, and what reached the model.
"""

import asyncio
import json
import os
import time

from claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    create_sdk_mcp_server,
    query,
    tool,
)

from harness import (
    AGENT_SDK_CLI,
    REPOS,
    TAP,
    check,
    expect,
    fleet_env,
    message_texts,
    new_repo,
    processes_in,
    requests_by_rule,
    requests_for,
    rule_text,
    run,
)

SDK = "sdk=python"


def options(name, **extra):
    return ClaudeAgentOptions(
        cli_path=AGENT_SDK_CLI,
        cwd=os.path.join(REPOS, name),
        env=fleet_env(name),
        stderr=TAP.stderr,
        **extra,
    )


async def collect(messages):
    """All messages of a one-shot query. An error result ends the SDK's stream with a
    ResultError after the result itself has been yielded; that is the result's business, so
    it is kept only when no result came."""
    out = []
    try:
        async for m in messages:
            out.append(m)
    except Exception:
        if not any(isinstance(m, ResultMessage) for m in out):
            raise
    return out


async def until(messages, predicate, what):
    """Reads from one long-lived receive_messages() iterator until predicate holds."""
    seen = []
    async for m in messages:
        seen.append(m)
        if predicate(m):
            return m, seen
    raise AssertionError(f"the stream ended before {what}; got {[type(m).__name__ for m in seen]}")


def result_of(messages):
    results = [m for m in messages if isinstance(m, ResultMessage)]
    check(results, f"no ResultMessage among {[type(m).__name__ for m in messages]}")
    return results[-1]


def assistant_text(messages):
    return "".join(
        b.text for m in messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, TextBlock)
    )


def expect_success(result, text_rule):
    expect((result.subtype, result.is_error), ("success", False), "result subtype, is_error")
    expect(result.result, rule_text(text_rule), "result text")


def tool_results_in_last_request(marker_requests):
    """The tool results of the last request of a conversation, as text."""
    return message_texts(marker_requests[-1]["body"])[-1][1]


async def plain_query(name):
    new_repo(name)
    prompt = f"[agent-sdk:plain] {SDK} say hello"
    messages = await collect(query(prompt=prompt, options=options(name)))
    inits = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init"]
    check(inits, "no system/init message")
    result = result_of(messages)
    expect_success(result, "plain")
    expect(assistant_text(messages), rule_text("plain"), "assistant text")
    check(result.session_id, "result has no session_id")
    expect(result.session_id, inits[0].data.get("session_id"), "result session_id = init session_id")
    usage = result.usage or {}
    expect(
        (usage.get("input_tokens"), usage.get("output_tokens")),
        (120, 9),
        "result usage (input, output) as the scenario scripts it",
    )
    expect(len(requests_for("[agent-sdk:plain]", SDK)), 1, "model requests")


async def client_keeps_history(name):
    new_repo(name)
    async with ClaudeSDKClient(options(name)) as client:
        await client.query(f"[agent-sdk:history] {SDK} first message")
        first = result_of([m async for m in client.receive_response()])
        await client.query("second message")
        second = result_of([m async for m in client.receive_response()])
    expect_success(first, "history-first")
    expect_success(second, "history-second")
    expect(second.session_id, first.session_id, "one session for both messages")
    requests = requests_for("[agent-sdk:history]", SDK)
    expect([r["rule"] for r in requests], ["history-first", "history-second"], "rules answering")
    history = message_texts(requests[1]["body"])
    expect([role for role, _ in history], ["user", "assistant", "user"], "roles of the 2nd request")
    check("first message" in history[0][1], f"1st user message missing: {history[0]}")
    check(rule_text("history-first") in history[1][1], f"1st answer missing: {history[1]}")
    check("second message" in history[2][1], f"2nd user message missing: {history[2]}")


async def accept_edits_changes_a_file(name):
    repo = new_repo(name)
    notes = os.path.join(repo, "notes.txt")
    with open(notes, "w", encoding="utf-8") as f:
        f.write("colour = red\n")
    prompt = f"[agent-sdk:accept-edits] {SDK} make it blue"
    messages = await collect(query(prompt=prompt, options=options(name, permission_mode="acceptEdits")))
    with open(notes, encoding="utf-8") as f:
        expect(f.read(), "colour = blue\n", "notes.txt on disk")
    expect_success(result_of(messages), "accept-edits-done")


async def can_use_tool_allow_and_deny(name):
    repo = new_repo(name)
    asked = []

    async def decide(tool_name, tool_input, context):
        asked.append((tool_name, tool_input.get("command"), context.tool_use_id))
        if "allowed.txt" in tool_input.get("command", ""):
            return PermissionResultAllow(updated_input=tool_input)
        return PermissionResultDeny(message="denied by the agent-sdk check")

    async with ClaudeSDKClient(options(name, can_use_tool=decide, permission_mode="default")) as client:
        await client.query(f"[agent-sdk:can-use-tool] {SDK} make two files")
        result = result_of([m async for m in client.receive_response()])
    expect(
        sorted(asked),
        [
            ("Bash", "touch allowed.txt", "toolu_cut_allow"),
            ("Bash", "touch denied.txt", "toolu_cut_deny"),
        ],
        "can_use_tool calls (tool, command, tool_use_id)",
    )
    check(os.path.exists(os.path.join(repo, "allowed.txt")), "allowed.txt was not created")
    check(not os.path.exists(os.path.join(repo, "denied.txt")), "denied.txt was created")
    expect_success(result, "can-use-tool-done")
    denials = result.permission_denials or []
    expect(
        [(d.get("tool_name"), d.get("tool_use_id")) for d in denials],
        [("Bash", "toolu_cut_deny")],
        "permission_denials",
    )
    sent = tool_results_in_last_request(requests_for("[agent-sdk:can-use-tool]", SDK))
    check("denied by the agent-sdk check" in sent, f"the deny message did not reach the model: {sent}")


async def pre_tool_use_hook_denies_bash(name):
    repo = new_repo(name)
    seen = []

    async def deny(hook_input, tool_use_id, context):
        seen.append((hook_input.get("hook_event_name"), hook_input.get("tool_name"), tool_use_id))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "blocked by the agent-sdk check hook",
            }
        }

    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny])]}
    opts = options(name, hooks=hooks, allowed_tools=["Bash"])
    async with ClaudeSDKClient(opts) as client:
        await client.query(f"[agent-sdk:hook-pre] {SDK} make a file")
        result = result_of([m async for m in client.receive_response()])
    expect(seen, [("PreToolUse", "Bash", "toolu_hook_pre")], "hook calls (event, tool, tool_use_id)")
    check(not os.path.exists(os.path.join(repo, "hooked.txt")), "hooked.txt was created despite the hook")
    expect_success(result, "hook-pre-done")
    sent = tool_results_in_last_request(requests_for("[agent-sdk:hook-pre]", SDK))
    check("blocked by the agent-sdk check hook" in sent, f"the hook's reason did not reach the model: {sent}")


async def post_tool_use_hook_sees_result(name):
    new_repo(name)
    seen = []

    async def observe(hook_input, tool_use_id, context):
        seen.append(hook_input)
        return {}

    hooks = {"PostToolUse": [HookMatcher(matcher="Bash", hooks=[observe])]}
    opts = options(name, hooks=hooks, allowed_tools=["Bash"])
    async with ClaudeSDKClient(opts) as client:
        await client.query(f"[agent-sdk:hook-post] {SDK} echo something")
        result = result_of([m async for m in client.receive_response()])
    expect(len(seen), 1, "PostToolUse hook calls")
    expect(
        (seen[0].get("hook_event_name"), seen[0].get("tool_name"), seen[0].get("tool_use_id")),
        ("PostToolUse", "Bash", "toolu_hook_post"),
        "hook input (event, tool, tool_use_id)",
    )
    response = json.dumps(seen[0].get("tool_response"))
    check("post-hook-sees-this" in response, f"tool_response lacks the command's output: {response}")
    expect_success(result, "hook-post-done")


def sleeps_in(repo):
    return [p for p in processes_in(repo) if p[1] == "sleep"]


async def interrupt_stops_a_running_command(name):
    repo = new_repo(name)
    async with ClaudeSDKClient(options(name, allowed_tools=["Bash"])) as client:
        stream = client.receive_messages()
        await client.query(f"[agent-sdk:interrupt] {SDK} run the long command")
        await until(
            stream,
            lambda m: isinstance(m, AssistantMessage) and any(isinstance(b, ToolUseBlock) for b in m.content),
            "the Bash call",
        )
        for _ in range(200):
            if sleeps_in(repo):
                break
            await asyncio.sleep(0.05)
        check(sleeps_in(repo), "`sleep 30` never started")
        started = time.monotonic()
        await client.interrupt()
        took = time.monotonic() - started
        print(f"    {name}: interrupt acknowledged in {took * 1000:.0f} ms", flush=True)
        check(took < 10, f"interrupt took {took:.1f} s to be acknowledged")
        interrupted, _ = await until(stream, lambda m: isinstance(m, ResultMessage), "the interrupted result")
        expect(interrupted.subtype, "error_during_execution", "result subtype after interrupt")
        for _ in range(100):
            if not sleeps_in(repo):
                break
            await asyncio.sleep(0.05)
        check(not sleeps_in(repo), f"`sleep 30` still runs after the interrupt: {sleeps_in(repo)}")
        await client.query("after the interrupt")
        after, _ = await until(stream, lambda m: isinstance(m, ResultMessage), "the next result")
    expect_success(after, "interrupt-after")


async def agents_from_initialize(name):
    new_repo(name)
    greeter = AgentDefinition(
        description="Greets people. Use it for any greeting.",
        prompt="You are the greeter of the agent-sdk check.",
        tools=["Read"],
    )
    opts = options(name, agents={"greeter": greeter}, allowed_tools=["Agent"])
    async with ClaudeSDKClient(opts) as client:
        info = await client.get_server_info() or {}
        await client.query(f"[agent-sdk:agents] {SDK} ask the greeter")
        result = result_of([m async for m in client.receive_response()])
    names = [a.get("name") for a in info.get("agents", []) if isinstance(a, dict)]
    check("greeter" in names, f"initialize's agents lack greeter: {names}")
    subs = requests_by_rule("agents-sub")
    expect(len(subs), 1, "requests of the greeter subagent")
    system = json.dumps(subs[0]["body"].get("system"))
    check("You are the greeter of the agent-sdk check." in system, f"the greeter's prompt is not its system prompt: {system[:300]}")
    sent = tool_results_in_last_request(requests_for("[agent-sdk:agents]", SDK))
    check(rule_text("agents-sub") in sent, f"the Agent result lacks the greeter's answer: {sent}")
    expect_success(result, "agents-done")


async def set_mode_set_model_context_usage(name):
    repo = new_repo(name)
    asked = []

    async def refuse(tool_name, tool_input, context):
        asked.append(tool_name)
        return PermissionResultDeny(message="the controls check allows nothing by hand")

    opts = options(name, model="claude-sonnet-4-5", can_use_tool=refuse, permission_mode="default")
    async with ClaudeSDKClient(opts) as client:
        await client.set_permission_mode("acceptEdits")
        await client.set_model("claude-haiku-4-5")
        await client.query(f"[agent-sdk:controls] {SDK} write the file")
        result = result_of([m async for m in client.receive_response()])
        usage = await client.get_context_usage()
    expect(asked, [], "can_use_tool calls (acceptEdits allows the Write)")
    path = os.path.join(repo, "mode.txt")
    check(os.path.exists(path), "mode.txt was not written")
    models = {r["body"].get("model") for r in requests_for("[agent-sdk:controls]", SDK)}
    expect(models, {"claude-haiku-4-5"}, "models the fake server saw after set_model")
    expect_success(result, "controls-done")
    check(isinstance(usage, dict), f"get_context_usage returned {usage!r}")
    for key in ("totalTokens", "maxTokens"):
        check(isinstance(usage.get(key), int) and usage[key] > 0, f"get_context_usage {key}: {usage.get(key)!r}")
    categories = usage.get("categories")
    check(isinstance(categories, list) and categories, f"get_context_usage categories: {categories!r}")
    check(all("name" in c and "tokens" in c for c in categories), f"categories lack name/tokens: {categories}")


async def sdk_mcp_tool(name):
    new_repo(name)
    calls = []

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args):
        calls.append(dict(args))
        return {"content": [{"type": "text", "text": f"SUM={args['a'] + args['b']}"}]}

    server = create_sdk_mcp_server("calc", tools=[add])
    opts = options(name, mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])
    async with ClaudeSDKClient(opts) as client:
        await client.query(f"[agent-sdk:mcp] {SDK} add two and three")
        messages = [m async for m in client.receive_response()]
    inits = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init"]
    check(inits, "no system/init message")
    tools = inits[0].data.get("tools", [])
    check("mcp__calc__add" in tools, f"system/init does not list mcp__calc__add: {tools}")
    expect(calls, [{"a": 2, "b": 3}], "calls of the SDK tool")
    # mcp-done answers only a request whose tool result holds the tool's SUM=5.
    expect_success(result_of(messages), "mcp-done")


async def resume_by_id(name):
    new_repo(name)
    first = result_of(await collect(query(prompt=f"[agent-sdk:resume] {SDK} first run", options=options(name))))
    expect_success(first, "resume-first")
    again = await collect(query(prompt="second run", options=options(name, resume=first.session_id)))
    second = result_of(again)
    expect_success(second, "resume-second")
    history = message_texts(requests_by_rule("resume-second")[0]["body"])
    check(rule_text("resume-first") in json.dumps(history), f"the resumed request lacks the first run: {history}")


async def continue_conversation(name):
    new_repo(name)
    first = result_of(await collect(query(prompt=f"[agent-sdk:continue] {SDK} first run", options=options(name))))
    expect_success(first, "continue-first")
    again = await collect(query(prompt="second run", options=options(name, continue_conversation=True)))
    second = result_of(again)
    expect_success(second, "continue-second")
    history = message_texts(requests_by_rule("continue-second")[0]["body"])
    check(rule_text("continue-first") in json.dumps(history), f"the continued request lacks the first run: {history}")


async def max_turns(name):
    new_repo(name)
    prompt = f"[agent-sdk:max-turns] {SDK} loop forever"
    opts = options(name, max_turns=2, allowed_tools=["Bash"])
    result = result_of(await collect(query(prompt=prompt, options=opts)))
    expect((result.subtype, result.is_error), ("error_max_turns", True), "result subtype, is_error")
    expect(len(requests_for("[agent-sdk:max-turns]", SDK)), 2, "model requests with max_turns=2")


async def partial_messages(name):
    new_repo(name)
    prompt = f"[agent-sdk:partial] {SDK} stream it"
    messages = await collect(query(prompt=prompt, options=options(name, include_partial_messages=True)))
    events = [m.event for m in messages if isinstance(m, StreamEvent)]
    kinds = [e.get("type") for e in events]
    check(kinds, "no StreamEvent messages")
    expect((kinds[0], kinds[-1]), ("message_start", "message_stop"), "first and last event")
    for kind in ("content_block_start", "content_block_delta", "content_block_stop", "message_delta"):
        check(kind in kinds, f"no {kind} among {kinds}")
    deltas = [e["delta"]["text"] for e in events if e.get("type") == "content_block_delta" and e["delta"].get("type") == "text_delta"]
    check(len(deltas) > 1, f"the text came in {len(deltas)} delta(s)")
    expect("".join(deltas), rule_text("partial"), "text deltas joined")
    expect_success(result_of(messages), "partial")


CHECKS = [
    ("plain", plain_query),
    ("history", client_keeps_history),
    ("accept-edits", accept_edits_changes_a_file),
    ("can-use-tool", can_use_tool_allow_and_deny),
    ("hook-pre", pre_tool_use_hook_denies_bash),
    ("hook-post", post_tool_use_hook_sees_result),
    ("interrupt", interrupt_stops_a_running_command),
    ("agents", agents_from_initialize),
    ("controls", set_mode_set_model_context_usage),
    ("mcp", sdk_mcp_tool),
    ("resume", resume_by_id),
    ("continue", continue_conversation),
    ("max-turns", max_turns),
    ("partial", partial_messages),
]

if __name__ == "__main__":
    run("py", CHECKS)
