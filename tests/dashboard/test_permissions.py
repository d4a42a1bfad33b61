"""Permission questions of a session started with `--dashboard`, answered on the page: with
no terminal and no SDK host, a headless run in the default mode waits for the page. One Bash
command is allowed (it runs), the next denied (it does not), and the run ends."""

from types import SimpleNamespace

import pytest
from playwright.sync_api import expect

import harness
import scenarios
from dash import open_page, tid


@pytest.fixture(scope="module")
def run(context):
    project = harness.Project()
    model = harness.FakeModel(scenarios.permissions(project.repo), project.root)
    try:
        proc = project.start(
            ["-p", "DASH-PERM: make two files", "--dashboard", "--output-format", "stream-json",
             "--verbose"], model_url=model.url, name="fleet -p --dashboard (permissions)")
        url = proc.wait_line(harness.DASHBOARD_URL.pattern, which="stderr").group(1)
        page = context.new_page()
        open_page(page, url)
        yield SimpleNamespace(project=project, proc=proc, page=page)
    finally:
        project.close()
        model.stop()


def answer(page, tool_text, button):
    question = tid(page, "permission").filter(has_text=tool_text)
    expect(question).to_have_count(1)
    expect(question).to_contain_text("Bash")
    question.locator(f'[data-testid="{button}"]').click()
    return question


def test_allow_runs_the_command(run):
    question = answer(run.page, "allowed.txt", "allow")
    expect(question).to_have_count(0)
    run.proc.wait_line(r'"tool_use_id"')
    # The second question comes once the first command ran.
    expect(tid(run.page, "permission").filter(has_text="denied.txt")).to_have_count(1)
    assert (run.project.repo / "allowed.txt").exists()


def test_deny_refuses_it_and_the_run_ends(run):
    question = answer(run.page, "denied.txt", "deny")
    # The answer was taken. (The run ends at once, and its server with it, so the page may
    # keep the card: the batch that removes it can be lost with the server.)
    expect(question.locator(".action-result")).to_have_attribute("data-ok", "true")
    run.proc.wait_line("PERM-DONE")
    assert run.proc.wait() == 0, run.proc.text()
    assert not (run.project.repo / "denied.txt").exists()
