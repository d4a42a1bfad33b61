"""Shared by the Python Agent SDK checks: where things are, a fresh git repository per check,
the fake server's request log, a tap on the lines the SDK and fleet exchange, the processes a
check left behind, and a runner that gives every check a timeout.

Run by scripts/agent-sdk-check.sh, which sets AGENT_SDK_CLI (the CLI to start), FAKE_MODEL_URL and AGENT_SDK_WORK.
"""

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
import traceback
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_SDK_CLI = os.environ["AGENT_SDK_CLI"]
BASE_URL = os.environ["FAKE_MODEL_URL"]
WORK = os.environ["AGENT_SDK_WORK"]
REPOS = os.path.join(WORK, "repos")
CHECK_TIMEOUT = float(os.environ.get("AGENT_SDK_CHECK_TIMEOUT", "30"))
# While debugging, AGENT_SDK_ONLY=agents,ts-mcp runs only those checks.
API_KEY = "sk-ant-agent-sdk-check-dummy"

with open(os.path.join(HERE, "scenario.yaml"), encoding="utf-8") as f:
    SCENARIO = yaml.safe_load(f.read().replace("__REPOS__", REPOS))


def rule(name):
    for r in SCENARIO["rules"]:
        if r.get("name") == name:
            return r
    raise KeyError(f"scenario has no rule named {name!r}")


def rule_text(name):
    """The text of a rule's (single) text block."""
    return "".join(b["text"] for b in rule(name)["respond"] if "text" in b)


def expect(actual, expected, what):
    if actual != expected:
        raise AssertionError(f"{what}:\n  expected {expected!r}\n  actual   {actual!r}")


def check(condition, what):
    if not condition:
        raise AssertionError(what)


# --- the fake model server ---------------------------------------------------------------------


def request_log():
    """Every request the fake server has received (GET /_fake/requests)."""
    with urllib.request.urlopen(f"{BASE_URL}/_fake/requests") as resp:
        return json.load(resp)


def first_user_text(body):
    messages = body.get("messages", []) if isinstance(body, dict) else []
    first = next((m for m in messages if m.get("role") == "user"), None)
    return json.dumps(first.get("content"), ensure_ascii=False) if first else ""


def requests_for(*needles):
    """Requests whose first user message holds every needle (a check's marker and its SDK)."""
    return [r for r in request_log() if all(n in first_user_text(r["body"]) for n in needles)]


def requests_by_rule(name):
    return [r for r in request_log() if r.get("rule") == name]


def message_texts(body):
    """Each message of a request as (role, its text and tool results flattened)."""
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            out.append((m["role"], content))
            continue
        parts = []
        for b in content or []:
            if b.get("type") == "text":
                parts.append(b["text"])
            elif b.get("type") == "tool_result":
                parts.append(json.dumps(b.get("content"), ensure_ascii=False))
            elif b.get("type") == "tool_use":
                parts.append(f"tool_use {b.get('name')} {json.dumps(b.get('input'))}")
        out.append((m["role"], "\n".join(parts)))
    return out


# --- a fresh repository and environment per check ----------------------------------------------


def new_repo(name):
    """A new git repository under the work folder, with one commit, and its own home."""
    repo = os.path.join(REPOS, name)
    os.makedirs(repo)
    git = ["git", "-c", "user.name=agent-sdk-check", "-c", "user.email=check@example.invalid"]
    with open(os.path.join(repo, "README.md"), "w", encoding="utf-8") as f:
        f.write(f"# {name}\n")
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    subprocess.run(git + ["-C", repo, "add", "."], check=True)
    subprocess.run(git + ["-C", repo, "commit", "-q", "-m", "start"], check=True)
    os.makedirs(os.path.join(WORK, "homes", name))
    return repo


def fleet_env(repo_name):
    """What fleet needs: the fake server, a dummy key, and a home of its own (no user settings,
    no sessions from other checks)."""
    home = os.path.join(WORK, "homes", repo_name)
    return {
        "ANTHROPIC_BASE_URL": BASE_URL,
        "ANTHROPIC_API_KEY": API_KEY,
        "FLEET_PROVIDER": "anthropic",
        "HOME": home,
        "FLEET_HOME": os.path.join(home, ".fleet"),
    }


# --- the lines the SDK and fleet exchange ------------------------------------------------------


class Tap:
    """Every line of the current check: `sdk>` what the SDK wrote to fleet's stdin, `fleet>` what
    fleet printed on stdout, `err>` its stderr. Shown when a check fails."""

    def __init__(self):
        self.lines = []

    def add(self, who, line):
        self.lines.append((time.monotonic(), who, line.rstrip("\n")))

    def stderr(self, line):
        self.add("err>", line)

    def dump(self, limit=60):
        lines = self.lines if len(self.lines) <= limit else self.lines[-limit:]
        if len(self.lines) > limit:
            print(f"    … {len(self.lines) - limit} earlier lines")
        for _, who, line in lines:
            shown = line if len(line) <= 600 else line[:600] + f"…({len(line)} chars)"
            print(f"    {who} {shown}")


TAP = Tap()


def install_tap():
    """Wraps the SDK's subprocess transport so every line in and out lands in TAP. Only logging
    is added; what the SDK sends and parses is unchanged."""
    from claude_agent_sdk._internal.transport import subprocess_cli as sc

    parse = sc._parse_stdout_line
    write = sc.SubprocessCLITransport.write

    def tapped_parse(line):
        if line.strip():
            TAP.add("fleet>", line)
        return parse(line)

    async def tapped_write(self, data):
        for line in data.splitlines():
            TAP.add("sdk>", line)
        return await write(self, data)

    sc._parse_stdout_line = tapped_parse
    sc.SubprocessCLITransport.write = tapped_write


# --- processes a check started -----------------------------------------------------------------


def processes_in(folder):
    """Live processes whose working folder is `folder` or below it: (pid, name, command line).
    Every check runs fleet in its own new repository, so these are exactly the check's fleet
    and the commands fleet ran (the /proc equivalent of `pgrep` narrowed to one folder)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                if f.read().rsplit(")", 1)[-1].split()[0] == "Z":
                    continue  # a zombie is already gone, only not yet reaped
            with open(f"/proc/{entry}/comm", encoding="utf-8") as f:
                name = f.read().strip()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if cwd == folder or cwd.startswith(folder + "/"):
            found.append((int(entry), name, cmd))
    return found


def wait_until(predicate, seconds, step=0.05):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def reap(folder):
    """Kills what is still running in `folder` after a check, after a short grace period for
    fleet to exit on its own. Returns what had to be killed."""
    if wait_until(lambda: not processes_in(folder), 3):
        return []
    left = processes_in(folder)
    for pid, _, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


def summary(request):
    """One line for a request in the fake server's log."""
    body = request["body"] if isinstance(request["body"], dict) else {}
    last = message_texts(body)[-1][1] if body.get("messages") else ""
    last = last if len(last) <= 160 else last[:160] + "…"
    return (
        f"#{request['seq']} {request['status']} rule={request['rule']} "
        f"model={body.get('model')} last={last!r}"
    )


def short_trace(error):
    """The check's own frames and the error: the SDK's inner frames say little to a reader."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(HERE)]
    lines = [f"at {os.path.basename(f.filename)}:{f.lineno} {f.line}\n" for f in frames[1:]]
    return "".join(lines) + "".join(traceback.format_exception_only(error))


class TapLog(logging.Handler):
    """The SDK's own log lines (its errors and warnings) go to the tap, not to stderr."""

    def emit(self, record):
        TAP.add("log>", f"{record.levelname} {record.name}: {record.getMessage()}")


# --- the runner --------------------------------------------------------------------------------


def run(prefix, checks):
    """Runs each check with a timeout, one at a time; prints `  ok   <name>` or `  FAIL <name>`
    with the reason and the exchanged lines; exits 1 if any failed. `checks` are (short name,
    async function) pairs; the function gets `<prefix>-<short name>`, the name of its
    repository (scenario.yaml names two of them in file paths)."""
    install_tap()
    sdk_log = logging.getLogger("claude_agent_sdk")
    sdk_log.addHandler(TapLog())
    sdk_log.propagate = False
    only = [n for n in os.environ.get("AGENT_SDK_ONLY", "").split(",") if n]
    failed = 0
    for short, fn in checks:
        name = f"{prefix}-{short}"
        if only and name not in only and short not in only:
            continue
        TAP.lines.clear()
        seen_requests = len(request_log())
        started = time.monotonic()
        error = None
        try:
            asyncio.run(asyncio.wait_for(fn(name), CHECK_TIMEOUT))
        except asyncio.TimeoutError:
            error = f"timed out after {CHECK_TIMEOUT:.0f} s\n"
        except Exception as e:  # noqa: BLE001 - every failure is reported, none stops the others
            error = short_trace(e)
        left = reap(os.path.join(REPOS, name))
        if left and error is None:
            error = "processes still running after the check:\n" + "".join(
                f"  {pid} {cmd}\n" for pid, _, cmd in left
            )
        took = time.monotonic() - started
        if error is None:
            print(f"  ok   {name} ({took:.1f} s)", flush=True)
            continue
        failed += 1
        print(f"  FAIL {name} ({took:.1f} s)")
        for line in error.rstrip().splitlines():
            print(f"    {line}")
        print("    -- lines exchanged (sdk> to fleet, fleet> from fleet, err> fleet's stderr, log> the SDK's log):")
        TAP.dump()
        print("    -- what the fake model server received meanwhile:")
        for r in request_log()[seen_requests:]:
            print(f"    {summary(r)}")
        sys.stdout.flush()
    sys.exit(1 if failed else 0)
