"""A team run watched by `fleet dashboard` over the same FLEET_HOME (the store, through
inotify): the page is open before the session starts, the session appears in the list live,
the team's members, mail and task board are shown, and a message sent from the page reaches
a teammate, whose answer comes back into the list as text.

The tests run in order against one session; beta keeps it alive in a Bash command waiting
for a gate file, opened when the module ends."""

import re
from types import SimpleNamespace

import pytest
from playwright.sync_api import expect

import harness
import scenarios
from dash import STATE_RECORDER, open_page, shot, tid


@pytest.fixture(scope="module")
def run(context):
    project = harness.Project()
    gate = project.root / "gate"
    model = harness.FakeModel(scenarios.team(gate), project.root)
    try:
        dashboard, url = project.dashboard()
        page = context.new_page()
        page.add_init_script(STATE_RECORDER)
        yield SimpleNamespace(project=project, gate=gate, model=model, dashboard=dashboard, url=url,
                              page=page, session=None)
    finally:
        gate.touch()
        project.close()
        model.stop()


def test_a_new_session_appears_in_the_list(run):
    page = run.page
    # No session yet, so no event stream either: the page asks for the list again until one
    # appears.
    open_page(page, run.url, stream=False)
    expect(tid(page, "session-row")).to_have_count(0)
    run.session = run.project.start(
        ["-p", "DASH-TEAM: run the team", "--output-format", "stream-json", "--verbose",
         "--permission-mode", "bypassPermissions"], model_url=run.model.url, name="fleet -p (team)")
    session_id = run.session.wait_line(r'"session_id":"([^"]+)"').group(1)
    row = page.locator(f'[data-testid="session-row"][data-session-id="{session_id}"]')
    expect(row).to_have_attribute("data-state", "live")
    row.click()
    expect(tid(page, "connection")).to_have_attribute("data-status", "open")
    expect(tid(page, "session-title")).to_contain_text("DASH-TEAM")
    # The teammates join the tree.
    for name in ("alpha", "beta"):
        expect(page.locator(f'[data-testid="agent-node"][data-kind="teammate"]').filter(
            has_text=name)).to_have_count(1)


def test_members_mail_and_board(run):
    page = run.page
    tid(page, "tab-teams").click()
    team = page.locator(f'[data-testid="team"][data-team="{scenarios.TEAM}"]')
    expect(team).to_be_visible()
    for name in ("alpha", "beta"):
        expect(team.locator(f'[data-testid="member"][data-member="{name}"]')).to_have_count(1)
    expect(team.locator('[data-testid="team-message"]').filter(has_text="LEAD-DM")).not_to_have_count(0)
    board = {s: team.locator(f'[data-testid="board-column"][data-status="{s}"]')
             for s in ("pending", "in_progress", "completed")}
    expect(board["in_progress"].locator('[data-testid="board-task"]').filter(
        has_text="TASK-ONE")).to_have_count(1)
    expect(board["in_progress"].locator('[data-testid="board-task"]').filter(
        has_text="alpha")).to_have_count(1)
    expect(board["completed"].locator('[data-testid="board-task"]').filter(
        has_text="TASK-TWO")).to_have_count(1)


def test_a_message_from_the_page_reaches_a_teammate(run):
    page = run.page
    team = page.locator(f'[data-testid="team"][data-team="{scenarios.TEAM}"]')
    tid(page, "message-to").select_option("alpha")
    tid(page, "message-text").fill("PAGE-MESSAGE from the page")
    tid(page, "message-send").click()
    expect(tid(page, "action-result")).to_be_visible()
    expect(tid(page, "action-result")).not_to_contain_text(re.compile("error|refused|fail", re.I))
    # Alpha read it and wrote to the lead; that mail is shown as text.
    reply = team.locator('[data-testid="team-message"]').filter(has_text="ALPHA-ACK-PAGE")
    expect(reply).not_to_have_count(0)
    expect(reply.first).to_contain_text("<img src=x")
    assert page.locator("img").count() == 0
    assert page.evaluate("() => window.__xss") is None
    expect(team.locator('[data-testid="team-message"]').filter(
        has_text="PAGE-MESSAGE from the page")).not_to_have_count(0)
    shot(page, "team")


def test_the_session_ends_when_the_gate_opens(run):
    page = run.page
    run.gate.touch()
    assert run.session.wait(60) == 0, run.session.text()
    session_id = run.session.wait_line(r'"session_id":"([^"]+)"').group(1)
    row = page.locator(f'[data-testid="session-row"][data-session-id="{session_id}"]')
    # The session released its lock on its way out: the store says it ended.
    expect(row).to_have_attribute("data-state", "ended")
    # Its teammates are settled with it.
    for name in ("alpha", "beta"):
        node = page.locator('[data-testid="agent-node"][data-kind="teammate"]').filter(has_text=name)
        expect(node).not_to_have_attribute("data-state", re.compile("^(running|running_tool|waiting_for_model)$"))
