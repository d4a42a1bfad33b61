"""What the fake model answers in the dashboard's tests: a fan-out and a team. Each agent's
rules are keyed by a marker in its first user message (its prompt); within an agent, rules go
from the last step to the first, as the first rule that holds answers.

Agents that must stay "running" until a test has seen them wait in a real Bash command for a
gate file the test creates (`gate_wait`), so no state change depends on timing.
"""

XSS = '<img src=x onerror="window.__xss=1">'
XSS_DESC = "<img src=x onerror=window.__xss=2> probe"

GATED = 3  # fan-out children that wait for the gate


def gate_wait(gate):
    """A Bash command that returns once `gate` exists (at most 90 s)."""
    return (f"for i in $(seq 900); do [ -e '{gate}' ] && break; sleep 0.1; done; "
            f"[ -e '{gate}' ] && echo GATE-OPEN || echo GATE-TIMEOUT")


def tool(name, input):
    return {"tool_use": {"name": name, "input": input}}


def text(t):
    return {"text": t}


def rule(name, when, respond, **extra):
    return {"name": name, "when": when, "respond": respond, **extra}


def fanout(gate, readme):
    """The main agent (marker DASH-FANOUT) starts, in one reply, GATED children that run Bash
    until the gate opens, one that Reads and Edits README.md (a diff), one whose answer and
    description are HTML, and one background agent that waits for the model for ten minutes
    (a task to stop from the page). It answers the notification of the stopped task last."""
    calls = [
        tool("Agent", {"description": f"gated job {i}", "prompt": f"GATED-JOB {i}: wait for the gate",
                       "subagent_type": "general-purpose"})
        for i in range(GATED)
    ]
    calls += [
        tool("Agent", {"description": "edit job", "prompt": "EDIT-JOB: edit the readme",
                       "subagent_type": "general-purpose"}),
        tool("Agent", {"description": XSS_DESC, "prompt": "XSS-JOB: answer with markup",
                       "subagent_type": "general-purpose"}),
        tool("Agent", {"description": "long job", "prompt": "LONG-JOB: wait a long time",
                       "subagent_type": "general-purpose", "run_in_background": True}),
    ]
    return {
        "model": "claude-fake-1",
        "cache": {"enabled": False},
        "rules": [
            # Children.
            rule("gated-done", {"marker": "GATED-JOB", "has_tool_result": True},
                 [text("gated job done")]),
            rule("gated-wait", {"marker": "GATED-JOB"},
                 [tool("Bash", {"command": gate_wait(gate), "description": "wait for the gate"})]),
            rule("edit-edit", {"marker": "EDIT-JOB", "tool_result_contains": "README-LINE"},
                 [tool("Edit", {"file_path": str(readme), "old_string": "README-LINE old text",
                                "new_string": "README-LINE new text\nan added line"})], times=1),
            rule("edit-done", {"marker": "EDIT-JOB", "has_tool_result": True}, [text("edit done")]),
            rule("edit-read", {"marker": "EDIT-JOB"}, [tool("Read", {"file_path": str(readme)})]),
            rule("xss", {"marker": "XSS-JOB"}, [text(f"{XSS} XSS-PROBE as text")]),
            rule("long", {"marker": "LONG-JOB"}, [text("never seen")], delay_ms=600_000),
            # The main agent.
            rule("main-notified", {"marker": "DASH-FANOUT", "last_user_contains": "<task-notification>"},
                 [text("MAIN-SAW-NOTIFICATION")]),
            rule("main-summary", {"marker": "DASH-FANOUT", "has_tool_result": True},
                 [text("FANOUT-DONE")]),
            rule("main-fanout", {"marker": "DASH-FANOUT"}, calls, times=1),
            rule("main-other", {"marker": "DASH-FANOUT"}, [text("MAIN-NOTED")]),
        ],
    }


FANOUT_FILES = {"README.md": "# app\nREADME-LINE old text\nthe end\n"}

TEAM = "dash-squad"


def team(gate):
    """The lead (marker DASH-TEAM) creates team "dash squad" and two tasks, spawns alpha and
    beta, and tells alpha to take task 1. Alpha takes it and goes idle; mail with PAGE-MESSAGE
    (sent from the page) makes alpha answer the lead with an HTML string. Beta completes task
    2, then runs Bash until the gate opens, which keeps the team (and the session) alive."""

    def send(to, message):
        return tool("SendMessage", {"to": to, "message": message})

    return {
        "model": "claude-fake-1",
        "cache": {"enabled": False},
        "rules": [
            # Alpha.
            rule("alpha-page", {"marker": "ALPHA-START", "last_user_contains": "PAGE-MESSAGE",
                                "has_tool_result": False},
                 [send("team-lead", f"ALPHA-ACK-PAGE {XSS}")]),
            rule("alpha-idle", {"marker": "ALPHA-START", "tool_result_contains": "team-lead's inbox"},
                 [text("ALPHA-IDLE")]),
            rule("alpha-working", {"marker": "ALPHA-START", "tool_result_contains": "Updated task #1"},
                 [text("ALPHA-WORKING")]),
            rule("alpha-take", {"marker": "ALPHA-START", "last_user_contains": "LEAD-DM"},
                 [tool("TaskUpdate", {"taskId": "1", "owner": "alpha", "status": "in_progress"})]),
            rule("alpha-ready", {"marker": "ALPHA-START"}, [text("ALPHA-READY")]),
            # Beta.
            rule("beta-done", {"marker": "BETA-START", "tool_result_contains": "GATE-"},
                 [text("BETA-DONE")]),
            rule("beta-wait", {"marker": "BETA-START", "tool_result_contains": "Updated task #2"},
                 [tool("Bash", {"command": gate_wait(gate), "description": "wait for the gate"})]),
            rule("beta-take", {"marker": "BETA-START", "has_tool_result": False}, [
                tool("TaskUpdate", {"taskId": "2", "owner": "beta", "status": "completed"})], times=1),
            rule("beta-other", {"marker": "BETA-START"}, [text("BETA-NOTED")]),
            # The lead.
            rule("lead-waiting", {"marker": "DASH-TEAM", "tool_result_contains": "alpha's inbox"},
                 [text("LEAD-WAITING")]),
            rule("lead-dm", {"marker": "DASH-TEAM", "tool_result_contains": "Spawned successfully"},
                 [send("alpha", "LEAD-DM: take task 1")]),
            rule("lead-spawn", {"marker": "DASH-TEAM", "tool_result_contains": "created successfully"}, [
                tool("Agent", {"description": "first member", "name": "alpha",
                               "prompt": "ALPHA-START: wait for instructions"}),
                tool("Agent", {"description": "second member", "name": "beta",
                               "prompt": "BETA-START: take task 2"}),
            ], times=1),
            rule("lead-tasks", {"marker": "DASH-TEAM", "tool_result_contains": "created with you as lead"}, [
                tool("TaskCreate", {"subject": "TASK-ONE write notes", "description": "Write the notes"}),
                tool("TaskCreate", {"subject": "TASK-TWO review", "description": "Review the notes"}),
            ], times=1),
            rule("lead-create", {"marker": "DASH-TEAM", "has_tool_result": False},
                 [tool("TeamCreate", {"team_name": "dash squad", "description": "dashboard e2e"})], times=1),
            rule("lead-other", {"marker": "DASH-TEAM"}, [text("LEAD-NOTED")]),
        ],
    }


def bench_fanout(agents, child_delay_ms):
    """The benchmark's session: the main agent starts `agents` subagents in one reply; each
    answers after `child_delay_ms`."""
    calls = [tool("Agent", {"description": f"job {i}", "prompt": f"BENCH-CHILD {i}: report",
                            "subagent_type": "general-purpose"}) for i in range(agents)]
    return {
        "validate_requests": False,
        "request_log": "count_only",
        "cache": {"enabled": False},
        "rules": [
            rule("child", {"marker": "BENCH-CHILD"}, [text("job done")], delay_ms=child_delay_ms),
            rule("summary", {"marker": "DASH-BENCH", "has_tool_result": True}, [text("all jobs done")]),
            rule("fanout", {"marker": "DASH-BENCH"}, calls),
        ],
    }


def permissions(repo):
    """The main agent (marker DASH-PERM) asks to run two Bash commands that write, one after
    the other (each needs a permission in the default mode), then says PERM-DONE."""
    return {
        "model": "claude-fake-1",
        "cache": {"enabled": False},
        "rules": [
            rule("perm-first", {"marker": "DASH-PERM", "has_tool_result": False}, [
                tool("Bash", {"command": f"touch '{repo}/allowed.txt'", "description": "make allowed"})],
                times=1),
            rule("perm-second", {"marker": "DASH-PERM", "has_tool_result": True}, [
                tool("Bash", {"command": f"touch '{repo}/denied.txt'", "description": "make denied"})],
                times=1),
            rule("perm-done", {"marker": "DASH-PERM"}, [text("PERM-DONE")]),
        ],
    }
