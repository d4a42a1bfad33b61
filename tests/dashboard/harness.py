"""The real parts the dashboard's browser tests and benchmark drive: a fresh git repository
with its own HOME and FLEET_HOME, `fleet dev fake-model` running a scenario, `fleet -p …
--dashboard` and `fleet dashboard` as processes, and their URLs as they print them.

Every process is started in a session of its own and stopped whole (its process group) when
the test is done, so a Bash command a fleet agent started does not outlive the test.
Waits are bounded and event-driven (a line read from a pipe, a process exit), never sleeps.
"""

import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FLEET = os.environ.get("FLEET_BIN") or str(ROOT / "target" / "debug" / "fleet")
CHROMIUM = os.environ.get("FLEET_CHROMIUM", "/usr/bin/chromium")
# How long any one wait may take: generous, CI runs on 2 loaded cores.
WAIT_S = float(os.environ.get("FLEET_DASH_WAIT_S", "30"))

# Variables from the developer's environment that would change what fleet does.
SCRUBBED = [
    "FLEET_PROVIDER", "FLEET_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
    "FLEET_NO_SESSION_PERSISTENCE", "FLEET_TRUST_PROJECT", "CLAUDE_CONFIG_DIR", "CLAUDECODE",
]

DASHBOARD_URL = re.compile(r"(https?://[^\s/]+/\?token=[0-9A-Za-z_-]+)")


class Proc:
    """A process whose stdout and stderr are read into lists as they come, so a test can wait
    for a line without blocking on the pipe."""

    def __init__(self, args, *, env=None, cwd=None, name="process"):
        self.name = name
        self.args = [str(a) for a in args]
        self.lines = {"stdout": [], "stderr": []}
        self.cond = threading.Condition()
        self.popen = subprocess.Popen(
            self.args, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        self.readers = [
            threading.Thread(target=self._read, args=(self.popen.stdout, "stdout"), daemon=True),
            threading.Thread(target=self._read, args=(self.popen.stderr, "stderr"), daemon=True),
        ]
        for t in self.readers:
            t.start()

    def _read(self, pipe, which):
        for raw in iter(pipe.readline, b""):
            with self.cond:
                self.lines[which].append(raw.decode("utf-8", "replace").rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.lines[which].append(None)  # end of stream
            self.cond.notify_all()

    def wait_line(self, pattern, which="stdout", timeout=WAIT_S):
        """The first match of `pattern` in a line of `which`; fails naming what was seen."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            seen = 0
            while True:
                lines = self.lines[which]
                while seen < len(lines):
                    line = lines[seen]
                    seen += 1
                    if line is None:
                        raise AssertionError(
                            f"{self.name} closed its {which} (exit {self.popen.poll()}) "
                            f"before printing /{pattern}/:\n{self.text()}")
                    m = regex.search(line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"{self.name} printed no /{pattern}/ on {which} within {timeout:.0f} s:\n"
                        f"{self.text()}")
                self.cond.wait(left)

    def text(self, tail=60):
        with self.cond:
            out = [l for l in self.lines["stdout"] if l is not None][-tail:]
            err = [l for l in self.lines["stderr"] if l is not None][-tail:]
        return f"--- {self.name} stdout\n" + "\n".join(out) + f"\n--- {self.name} stderr\n" + "\n".join(err)

    def wait(self, timeout=WAIT_S):
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} did not exit within {timeout:.0f} s:\n{self.text()}")

    def stop(self):
        """Stops the process and everything in its process group."""
        if self.popen.poll() is None:
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(5)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.popen.wait(5)
        except subprocess.TimeoutExpired:
            pass


class FakeModel:
    """`fleet dev fake-model --scenario FILE`; `url` is what it printed."""

    def __init__(self, scenario, folder):
        path = Path(folder) / "scenario.json"
        path.write_text(json.dumps(scenario))
        self.proc = Proc([FLEET, "dev", "fake-model", "--scenario", path], name="fake model")
        self.url = self.proc.wait_line(r"^listening on (\S+)").group(1)

    def request_count(self):
        with urllib.request.urlopen(f"{self.url}/_fake/requests", timeout=WAIT_S) as resp:
            return len(json.load(resp))

    def stop(self):
        self.proc.stop()


class Project:
    """A git repository with one commit, its own HOME and FLEET_HOME, all under one temporary
    folder removed at `close()`."""

    def __init__(self, files=None, prefix="fleet-dash-"):
        self.tmp = tempfile.TemporaryDirectory(prefix=prefix)
        root = Path(self.tmp.name).resolve()
        self.root = root
        self.repo = root / "repo"
        self.home = root / "home"
        self.fleet_home = root / "fleet-home"
        for d in (self.repo, self.home):
            d.mkdir(parents=True)
        for rel, text in (files or {"README.md": "# app\n"}).items():
            p = self.repo / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        git = ["git", "-c", "user.name=fleet test", "-c", "user.email=test@fleet.invalid"]
        env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "start"]):
            subprocess.run(git + args, cwd=self.repo, env=env, check=True)
        self.procs = []

    def env(self, model_url=None, extra=None):
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        env.update(
            HOME=str(self.home), FLEET_HOME=str(self.fleet_home), GIT_CONFIG_GLOBAL="/dev/null",
            FLEET_MAX_RETRIES="2", FLEET_RETRY_BASE_DELAY_MS="5", FLEET_TRUST_PROJECT="1",
            # Foreground subagents' own lines on stdout (left out by default, as Claude Code
            # does): a test's failure then shows what each child did.
            FLEET_SUBAGENT_MESSAGES="1",
            # Nothing may open a browser window of its own: the tests drive theirs.
            BROWSER="true",
        )
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        if model_url:
            env.update(ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=model_url)
        env.update(extra or {})
        return env

    def start(self, args, *, model_url=None, extra_env=None, name="fleet", fleet=None):
        proc = Proc([fleet or FLEET, *args], env=self.env(model_url, extra_env), cwd=self.repo, name=name)
        self.procs.append(proc)
        return proc

    def session_with_dashboard(self, prompt, model_url, extra_args=(), extra_env=None, fleet=None):
        """`fleet -p PROMPT --dashboard …` (bypass mode, stream-json); returns the process and
        the dashboard's URL, read from its stderr."""
        proc = self.start(
            ["-p", prompt, "--dashboard", "--output-format", "stream-json", "--verbose",
             "--permission-mode", "bypassPermissions", *extra_args],
            model_url=model_url, extra_env=extra_env, name="fleet -p --dashboard", fleet=fleet)
        url = proc.wait_line(DASHBOARD_URL.pattern, which="stderr").group(1)
        return proc, url

    def dashboard(self, extra_args=(), fleet=None):
        """`fleet dashboard --no-open --port 0` over this FLEET_HOME; returns the process and
        the URL, its first stdout line."""
        proc = self.start(["dashboard", "--no-open", "--port", "0", *extra_args],
                          name="fleet dashboard", fleet=fleet)
        url = proc.wait_line(DASHBOARD_URL.pattern, which="stdout").group(1)
        first = next(l for l in proc.lines["stdout"] if l is not None)
        assert DASHBOARD_URL.search(first), f"the URL is not the first stdout line: {first!r}"
        return proc, url

    def close(self):
        for p in reversed(self.procs):
            p.stop()
        self.tmp.cleanup()


# --- plain HTTP, for what a browser cannot be made to send -------------------------------------


def origin_of(url):
    m = re.match(r"^(https?://[^/]+)", url)
    return m.group(1)


def token_of(url):
    return re.search(r"[?&]token=([^&]+)", url).group(1)


def http(method, url, *, body=None, headers=None):
    """(status, parsed JSON or text, headers) of one request; 4xx/5xx are returned, not
    raised."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=WAIT_S) as resp:
            status, raw, headers = resp.status, resp.read(), resp.headers
    except urllib.error.HTTPError as e:
        status, raw, headers = e.code, e.read(), e.headers
    text = raw.decode("utf-8", "replace")
    if "json" in headers.get("Content-Type", ""):
        try:
            return status, json.loads(text), headers
        except ValueError:
            pass
    return status, text, headers
