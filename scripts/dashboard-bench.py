#!/usr/bin/env python3
"""The dashboard's benchmark (issue 34): a fan-out of N subagents (10,000 by default) against
`fleet dev fake-model`, run by the real `fleet -p`, and the dashboard in Debian's Chromium.

Figures, printed as one JSON object:
- `session`: the run's wall time and peak RSS (the fleet process, from wait4) without
  `--dashboard`, with `--dashboard` and no page, and with `--dashboard` and a page open that
  follows the run (each `--repeat` times, interleaved, after `--warmup` runs not counted;
  medians and every figure). Each run has a FLEET_HOME of its own.
- `latency_ms`: event to page, from the page's `window.__fleetDash.applied` entries
  (`applied_ms - newest_event_ms`: when the page had drawn a batch, minus when the newest
  change in it happened in the session), p50 / p99 / max over every batch of the followed run.
- `page`: `fleet dashboard` over the FLEET_HOME the run left (N + 1 agents, ended): the time
  to the first byte, to DOMContentLoaded, to the first agent row, and to every agent counted
  (`window.__fleetDash.agents`); the JS heap (CDP `Performance.getMetrics`, after a forced GC)
  and the number of DOM nodes (the tree is virtualised).

Run with scripts/dashboard-check.sh --bench [ARGS] (it sets up Chromium and Playwright), or
with the venv's python after `eval "$(bash scripts/need-browser.sh)"`. FLEET_BIN (or --fleet)
names the binary; else target/release/fleet when it knows `--dashboard`, else target/debug/fleet;
the figures name the one used.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "dashboard"))

import harness  # noqa: E402
import scenarios  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402


def pick_fleet(explicit):
    if explicit:
        return str(Path(explicit).resolve()), "given"
    for profile in ("release", "debug"):
        path = ROOT / "target" / profile / "fleet"
        if path.exists():
            helptext = subprocess.run([str(path), "--help"], capture_output=True, text=True).stdout
            if "--dashboard" in helptext:
                return str(path), profile
    sys.exit("dashboard-bench: no fleet binary with --dashboard (cargo build -p fleet-cli)")


def raise_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def pct(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def run_session(fleet, model_url, project, agents, dashboard, follow=None):
    """One `fleet -p` fan-out in a FLEET_HOME of its own (a dashboard reads the past sessions
    of its home at start, so a shared one would make each run pay for the ones before);
    returns wall seconds, peak RSS in MB and, with `follow`, what the follower collected."""
    project.runs = getattr(project, "runs", 0) + 1
    home = project.root / f"home-{project.runs}"
    args = ["-p", "DASH-BENCH: start the jobs", "--output-format", "json",
            "--permission-mode", "bypassPermissions"]
    if dashboard:
        args.append("--dashboard")
    env = {"FLEET_MAX_CONCURRENT_SUBAGENTS": str(min(agents, 10_000)), "FLEET_HOME": str(home)}
    start = time.monotonic()
    proc = project.start(args, model_url=model_url, extra_env=env, name="fleet -p (bench)", fleet=fleet)
    followed = None
    if follow:
        url = proc.wait_line(harness.DASHBOARD_URL.pattern, which="stderr", timeout=120).group(1)
        followed = follow(url, proc)
    _, status, usage = os.wait4(proc.popen.pid, 0)
    wall = time.monotonic() - start
    proc.popen.returncode = os.waitstatus_to_exitcode(status)
    for t in proc.readers:
        t.join(10)
    if proc.popen.returncode != 0:
        raise SystemExit(f"dashboard-bench: the run failed ({proc.popen.returncode}):\n{proc.text()}")
    result = json.loads(next(l for l in proc.lines["stdout"] if l))
    completed = (result.get("subagent_stats") or {}).get("completed")
    project.last_home = home
    return {"wall_s": round(wall, 3), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "completed": completed}, followed


def exited(proc):
    """Whether the process has exited, without reaping it (wait4 reads its rusage later)."""
    return os.waitid(os.P_PID, proc.popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def metrics(page):
    cdp = page.context.new_cdp_session(page)
    cdp.send("HeapProfiler.enable")
    cdp.send("HeapProfiler.collectGarbage")
    cdp.send("Performance.enable")
    got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    cdp.detach()
    return {"js_heap_used_mb": round(got["JSHeapUsedSize"] / 2**20, 1),
            "js_heap_total_mb": round(got["JSHeapTotalSize"] / 2**20, 1),
            "dom_nodes": int(got["Nodes"])}


def follower(browser, agents):
    """Opens the page as soon as the URL is out and collects `__fleetDash.applied` until the
    run ends (the entries are polled: the page keeps the last 1,000)."""

    def follow(url, proc):
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url)
        entries = {}
        drawn_max = 0
        while True:
            try:
                dash = page.evaluate("() => window.__fleetDash ? {applied: window.__fleetDash.applied.slice(-1000), agents: window.__fleetDash.agents} : null")
            except Exception:  # the page went with the server at the end of the run
                break
            if dash:
                for e in dash["applied"]:
                    entries[e["seq"]] = e
                drawn_max = max(drawn_max, dash["agents"] or 0)
            if exited(proc):
                break
            # Polling is how a benchmark reads a page it must not slow down; not a sync.
            page.wait_for_timeout(250)
        heap = None
        try:
            heap = metrics(page)
        except Exception:
            pass
        page.close()
        lat = [e["applied_ms"] - e["newest_event_ms"] for e in entries.values()
               if e.get("newest_event_ms") is not None]
        return {"batches": len(entries), "agents_drawn": drawn_max, "latency": lat, "heap_at_end": heap}

    return follow


def page_load(browser, fleet, project, agents):
    """`fleet dashboard` over the last run's FLEET_HOME; a fresh page's load figures."""
    project.fleet_home = project.last_home
    t0 = time.monotonic()
    proc, url = project.dashboard(fleet=fleet)
    serve_s = time.monotonic() - t0
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    t0 = time.monotonic()
    response = page.goto(url, wait_until="commit")
    first_byte = time.monotonic() - t0
    page.wait_for_load_state("domcontentloaded", timeout=120_000)
    dcl = time.monotonic() - t0
    page.wait_for_selector('[data-testid="agent-node"]', timeout=120_000)
    first_row = time.monotonic() - t0
    page.wait_for_function(f"() => window.__fleetDash && window.__fleetDash.agents >= {agents + 1}",
                           timeout=120_000, polling="raf")
    all_counted = time.monotonic() - t0
    token = harness.token_of(url)
    origin = harness.origin_of(url)
    sessions = harness.http("GET", f"{origin}/api/sessions?token={token}")[1]
    snapshot_bytes = None
    if sessions:
        import urllib.request
        with urllib.request.urlopen(f"{origin}/api/sessions/{sessions[0]['id']}?token={token}") as r:
            snapshot_bytes = len(r.read())
    figures = {"server_ready_s": round(serve_s, 3), "status": response.status,
               "first_byte_s": round(first_byte, 3), "dom_content_loaded_s": round(dcl, 3),
               "first_agent_row_s": round(first_row, 3), "all_agents_counted_s": round(all_counted, 3),
               "snapshot_json_kb": round(snapshot_bytes / 1024, 1) if snapshot_bytes else None,
               **metrics(page)}
    # Scrolling the virtualised tree to its end keeps the DOM small.
    page.locator('[data-testid="agent-tree"]').evaluate("(t) => { t.scrollTop = t.scrollHeight; }")
    page.wait_for_timeout(500)
    figures["rows_in_dom_after_scroll"] = page.locator('[data-testid="agent-node"]').count()
    page.close()
    proc.stop()
    return figures


def median(runs, key):
    return round(statistics.median(r[key] for r in runs), 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=10_000)
    ap.add_argument("--child-delay-ms", type=int, default=0,
                    help="delay of every subagent's model answer (default 0)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each session variant")
    ap.add_argument("--warmup", type=int, default=1, help="runs without a dashboard first, not counted")
    ap.add_argument("--fleet", help="the fleet binary (default: FLEET_BIN, else release, else debug)")
    args = ap.parse_args()
    fleet, profile = pick_fleet(args.fleet or os.environ.get("FLEET_BIN"))
    raise_file_limit()
    project = harness.Project(prefix="fleet-dash-bench-")
    model = harness.FakeModel(scenarios.bench_fanout(args.agents, args.child_delay_ms), project.root)
    out = {"agents": args.agents, "child_delay_ms": args.child_delay_ms, "repeat": args.repeat,
           "warmup": args.warmup, "fleet": fleet,
           "build": profile, "chromium": None}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=harness.CHROMIUM, headless=True)
            out["chromium"] = browser.version
            plain, dash, followed_runs = [], [], []
            for _ in range(args.warmup):
                run_session(fleet, model.url, project, args.agents, False)
            for _ in range(args.repeat):
                plain.append(run_session(fleet, model.url, project, args.agents, False)[0])
                dash.append(run_session(fleet, model.url, project, args.agents, True)[0])
                fig, followed = run_session(fleet, model.url, project, args.agents, True,
                                            follow=follower(browser, args.agents))
                fig["batches"] = followed["batches"]
                fig["agents_drawn"] = followed["agents_drawn"]
                fig["page_heap_at_end"] = followed["heap_at_end"]
                fig["latency"] = followed.pop("latency")
                followed_runs.append(fig)
            lat = [v for r in followed_runs for v in r.pop("latency")]
            out["session"] = {
                "without_dashboard": {"wall_s": median(plain, "wall_s"),
                                      "peak_rss_mb": median(plain, "peak_rss_mb"), "runs": plain},
                "with_dashboard_no_page": {"wall_s": median(dash, "wall_s"),
                                           "peak_rss_mb": median(dash, "peak_rss_mb"), "runs": dash},
                "with_dashboard_and_page": {"wall_s": median(followed_runs, "wall_s"),
                                            "peak_rss_mb": median(followed_runs, "peak_rss_mb"),
                                            "runs": followed_runs},
            }
            out["latency_ms"] = {"batches": len(lat), "p50": pct(lat, 0.5), "p99": pct(lat, 0.99),
                                 "max": max(lat) if lat else None}
            out["page"] = page_load(browser, fleet, project, args.agents)
            browser.close()
    finally:
        model.stop()
        project.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
