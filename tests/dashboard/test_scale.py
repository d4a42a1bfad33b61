"""A fan-out of a few hundred agents, ended, read from the store by `fleet dashboard`: every
agent is counted, only the rows on screen are in the page (the tree is virtualised, which is
what keeps 10,000 agents usable — scripts/dashboard-bench.py measures that size), the last
agent is reached by scrolling, the filter finds one agent among all, and grouping by type
folds them into one row with its counts."""

from types import SimpleNamespace

import pytest
from playwright.sync_api import expect

import harness
import scenarios
from dash import agent_row, open_page, tid

AGENTS = 400


@pytest.fixture(scope="module")
def run(context):
    project = harness.Project()
    model = harness.FakeModel(scenarios.bench_fanout(AGENTS, 0), project.root)
    try:
        session = project.start(
            ["-p", "DASH-BENCH: start the jobs", "--output-format", "json",
             "--permission-mode", "bypassPermissions"],
            model_url=model.url, extra_env={"FLEET_MAX_CONCURRENT_SUBAGENTS": str(AGENTS)},
            name="fleet -p (fan-out)")
        assert session.wait(harness.WAIT_S * 4) == 0, session.text()
        dashboard, url = project.dashboard()
        page = context.new_page()
        open_page(page, url)
        yield SimpleNamespace(page=page)
    finally:
        project.close()
        model.stop()


def test_every_agent_is_counted_but_few_are_drawn(run):
    page = run.page
    expect(tid(page, "count-done")).to_have_text(str(AGENTS))
    main = page.locator('[data-testid="agent-node"][data-kind="main"]')
    assert main.get_attribute("data-state") in ("done", "idle"), main.get_attribute("data-state")
    drawn = tid(page, "agent-node").count()
    assert 0 < drawn < 100, f"{drawn} rows in the page for {AGENTS + 1} agents"
    ids = lambda: set(tid(page, "agent-node").evaluate_all(  # noqa: E731
        "(rows) => rows.map((r) => r.getAttribute('data-agent-id'))"))
    first = ids()
    # Scrolled to the end, other rows are drawn in place of the first ones.
    tid(page, "agent-tree").evaluate("(t) => { t.scrollTop = t.scrollHeight; }")
    page.wait_for_function(
        "(first) => [...document.querySelectorAll('[data-testid=agent-node]')]"
        ".every((r) => !first.includes(r.getAttribute('data-agent-id')))", arg=list(first))
    last = ids()
    assert last and not (last & first) and len(last) < 100, (len(first), len(last))


def test_the_filter_finds_one_agent(run):
    page = run.page
    tid(page, "agent-filter").fill(f"job {AGENTS - 7}")
    expect(agent_row(page, f"job {AGENTS - 7}")).to_have_count(1)
    expect(tid(page, "agent-node").filter(has_text="job 0")).to_have_count(0)
    tid(page, "agent-filter").fill("")


def test_group_by_type_folds_the_tree(run):
    page = run.page
    tid(page, "group-by-type").check()
    group = page.locator('[data-testid="agent-group"][data-type="general-purpose"]')
    expect(group).to_have_count(1)
    expect(group).to_contain_text(str(AGENTS))
    expect(tid(page, "agent-node").filter(has_text="job 1")).to_have_count(0)
    tid(page, "group-by-type").uncheck()
    expect(group).to_have_count(0)
