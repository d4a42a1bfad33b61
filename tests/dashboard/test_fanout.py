"""A fan-out run with `fleet -p … --dashboard`, watched in Chromium: the agents appear and
change state live, a transcript shows a coloured diff, strings from the model stay text, a
background task is stopped from the page, and the server refuses what it must.

The tests of this module run in order against one session (module fixture): the children
wait in Bash for a gate file until `test_states_change_live` opens it, and the background
child waits for the model until `test_stop_a_task_from_the_page` stops it."""

import re
from types import SimpleNamespace

import pytest
from playwright.sync_api import expect

import harness
import scenarios
from dash import STATE_RECORDER, agent_row, open_page, seen_states, shot, tid


@pytest.fixture(scope="module")
def run(context):
    project = harness.Project(scenarios.FANOUT_FILES)
    gate = project.root / "gate"
    model = harness.FakeModel(scenarios.fanout(gate, project.repo / "README.md"), project.root)
    try:
        proc, url = project.session_with_dashboard("DASH-FANOUT: start the jobs", model.url)
        page = context.new_page()
        page.add_init_script(STATE_RECORDER)
        yield SimpleNamespace(project=project, gate=gate, model=model, proc=proc, url=url, page=page)
    finally:
        gate.touch()  # no Bash loop waits past the test
        project.close()
        model.stop()


def test_agents_appear_live(run):
    page = run.page
    assert re.match(r"^http://127\.0\.0\.1:\d+/\?token=", run.url), f"loopback by default: {run.url}"
    open_page(page, run.url)
    # The live session opens with no click.
    live = page.locator('[data-testid="session-row"][data-state="live"]')
    expect(live).to_have_count(1)
    expect(tid(page, "session-title")).to_contain_text("DASH-FANOUT")
    # The main agent and the six children, the gated ones running Bash.
    expect(page.locator('[data-testid="agent-node"][data-kind="main"]')).to_have_count(1)
    for i in range(scenarios.GATED):
        row = agent_row(page, f"gated job {i}")
        expect(row).to_have_attribute("data-state", "running_tool")
        expect(row.locator(".agent-state")).to_contain_text("running Bash")
    expect(agent_row(page, "edit job")).to_have_attribute("data-state", "done")
    shot(page, "agents")
    # The counts agree with the rows (the main agent runs its Agent calls, too).
    running_tool = page.locator('[data-testid="agent-node"][data-state="running_tool"]')
    expect(tid(page, "count-running_tool")).to_have_text(str(running_tool.count()))
    # Foreground children are subagents; the one started with run_in_background is not.
    expect(agent_row(page, "long job")).to_have_attribute("data-kind", "background")
    for i in range(scenarios.GATED):
        expect(agent_row(page, f"gated job {i}")).to_have_attribute("data-kind", "subagent")


def test_transcript_shows_a_coloured_diff(run):
    page = run.page
    row = agent_row(page, "edit job")
    agent_id = row.get_attribute("data-agent-id")
    row.locator(".agent-desc").click()
    transcript = page.locator(f'[data-testid="transcript"][data-agent-id="{agent_id}"]')
    expect(transcript).to_be_visible()
    entries = transcript.locator('[data-testid="entry"]')
    expect(entries.filter(has_text="EDIT-JOB: edit the readme")).not_to_have_count(0)
    expect(transcript.locator('[data-testid="entry"][data-kind="assistant"]').filter(
        has_text="edit done")).to_have_count(1)
    # Tool calls are folded with their results; the Edit's diff is coloured by line.
    expect(transcript.locator('[data-testid="entry"][data-kind="tool_use"]')).to_have_count(2)
    assert transcript.locator("details").count() >= 2
    for details in transcript.locator("details").all():
        details.evaluate("(d) => { d.open = true; }")
    expect(transcript.locator(".diff-del").filter(has_text="README-LINE old text")).to_have_count(1)
    expect(transcript.locator(".diff-add").filter(has_text="README-LINE new text")).to_have_count(1)
    expect(transcript.locator(".diff-add").filter(has_text="an added line")).to_have_count(1)
    shot(page, "transcript")


def test_model_strings_are_text_not_html(run):
    page = run.page
    row = agent_row(page, "probe")
    expect(row.locator(".agent-desc")).to_have_text(re.compile(re.escape(scenarios.XSS_DESC)))
    expect(row).to_have_attribute("data-state", "done")
    agent_id = row.get_attribute("data-agent-id")
    row.locator(".agent-desc").click()
    transcript = page.locator(f'[data-testid="transcript"][data-agent-id="{agent_id}"]')
    answer = transcript.locator('[data-testid="entry"][data-kind="assistant"]')
    expect(answer).to_contain_text(scenarios.XSS)
    # No element was made of either string, and no handler ran.
    assert page.locator("img").count() == 0, page.locator("img").evaluate_all("(l) => l.map(e => e.outerHTML)")
    assert page.evaluate("() => window.__xss") is None


def test_states_change_live(run):
    page = run.page
    expect(tid(page, "tab-agents")).to_be_visible()
    tid(page, "tab-agents").click()
    ids = [agent_row(page, f"gated job {i}").get_attribute("data-agent-id") for i in range(scenarios.GATED)]
    run.gate.touch()
    for agent_id in ids:
        row = page.locator(f'[data-testid="agent-node"][data-agent-id="{agent_id}"]')
        expect(row).to_have_attribute("data-state", "done")
        expect(row.locator(".agent-state")).to_have_text("done")
        states = seen_states(page, agent_id)
        assert "running_tool" in states and states[-1] == "done", f"{agent_id}: {states}"
        assert states.index("running_tool") < states.index("done"), f"{agent_id}: {states}"
    # The counts agree with the rows (all seven are drawn): the three gated children, the
    # edit and the probe are done, the background job is not.
    done_rows = page.locator('[data-testid="agent-node"][data-state="done"]')
    expect(tid(page, "count-done")).to_have_text(str(done_rows.count()))
    assert done_rows.count() >= 5
    expect(agent_row(page, "long job")).not_to_have_attribute("data-state", "done")
    page.get_by_role("button", name="Close transcript").click()
    expect(tid(page, "transcript")).to_be_hidden()
    tid(page, "tab-timeline").click()
    expect(tid(page, "timeline")).to_be_visible()
    expect(tid(page, "usage-plot")).to_be_visible()
    shot(page, "timeline")
    tid(page, "tab-agents").click()


def test_requests_without_the_token_are_refused(run):
    origin = harness.origin_of(run.url)
    token = harness.token_of(run.url)
    wrong = ("0" if token[0] != "0" else "1") + token[1:]
    for path in ["/", "/api/sessions", f"/?token={token}x", f"/api/sessions?token={wrong}"]:
        status, body, _ = harness.http("GET", origin + path)
        assert status == 401, f"GET {path}: {status} {body!r}"
    status, sessions, _ = harness.http("GET", f"{origin}/api/sessions?token={token}")
    assert status == 200 and len(sessions) == 1, sessions
    session_id = sessions[0]["id"]
    status, _, _ = harness.http("GET", f"{origin}/api/sessions/{session_id}/events")
    assert status == 401
    # A page without the token gets a 401 too.
    response = run.page.context.new_page().goto(origin + "/")
    assert response.status == 401


def test_stop_a_task_from_the_page(run):
    page = run.page
    row = agent_row(page, "long job")
    expect(row).to_have_attribute("data-state", re.compile("^(running|waiting_for_model)$"))
    # A POST from another origin is refused before anything is stopped.
    origin, token = harness.origin_of(run.url), harness.token_of(run.url)
    status, sessions, _ = harness.http("GET", f"{origin}/api/sessions?token={token}")
    snapshot = harness.http("GET", f"{origin}/api/sessions/{sessions[0]['id']}?token={token}")[1]
    task_id = next(a["task_id"] for a in snapshot["agents"] if a.get("description") == "long job")
    assert task_id and snapshot["actions"]["stop_task"], snapshot["actions"]
    stop = f"{origin}/api/sessions/{sessions[0]['id']}/tasks/{task_id}/stop?token={token}"
    for headers in ({"Origin": "http://evil.example"}, {"Origin": origin.replace("127.0.0.1", "localhost")}, {}):
        status, body, _ = harness.http("POST", stop, body={}, headers=headers)
        assert status == 403, f"POST stop with {headers}: {status} {body!r}"
    expect(row).to_have_attribute("data-state", re.compile("^(running|waiting_for_model)$"))
    # The page's own button.
    row.locator('[data-testid="stop-task"]').click()
    expect(row).to_have_attribute("data-state", "killed")
    expect(row.locator(".agent-state")).to_have_text("killed")
    # The main agent hears of it and the run ends.
    run.proc.wait_line("MAIN-SAW-NOTIFICATION")
    assert run.proc.wait() == 0, run.proc.text()
