"""The page as the tests see it: locators for the DOM contract of
crates/fleet-dashboard/assets (data-testid names, see docs/dashboard.md), a recorder of every
agent state the page showed, and screenshots on request."""

import os
from pathlib import Path

from playwright.sync_api import expect

# Installed before the page's own script: notes, per agent id, each state its row showed, in
# order, so a test can tell that a change was drawn live (running_tool, then done) and not
# only found at the end. Rows of a virtualised list may be reused for other agents: the id is
# read at each change.
STATE_RECORDER = """
(() => {
  const seen = {};
  window.__seenStates = seen;
  const note = (el) => {
    if (!(el instanceof Element) || el.getAttribute('data-testid') !== 'agent-node') return;
    const id = el.getAttribute('data-agent-id'), state = el.getAttribute('data-state');
    if (!id || !state) return;
    const list = seen[id] || (seen[id] = []);
    if (list[list.length - 1] !== state) list.push(state);
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes') { note(r.target); continue; }
      for (const n of r.addedNodes) {
        if (!(n instanceof Element)) continue;
        note(n);
        n.querySelectorAll('[data-testid=agent-node]').forEach(note);
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true,
                        attributeFilter: ['data-state', 'data-agent-id']});
})();
"""


def tid(page, name):
    return page.locator(f'[data-testid="{name}"]')


def agent_row(page, description):
    """The tree's row of the agent whose description contains `description`."""
    return tid(page, "agent-node").filter(
        has=page.locator(".agent-desc", has_text=description))


def agent_by_id(page, agent_id):
    return page.locator(f'[data-testid="agent-node"][data-agent-id="{agent_id}"]')


def open_page(page, url, stream=True):
    """Loads the dashboard and waits for its event stream to be open (with `stream`: a page
    with no session open has none)."""
    response = page.goto(url)
    assert response is not None and response.status == 200, f"GET {url}: {response and response.status}"
    if stream:
        expect(tid(page, "connection")).to_have_attribute("data-status", "open")
    return response


def seen_states(page, agent_id):
    return page.evaluate("(id) => (window.__seenStates || {})[id] || []", agent_id)


def shot(page, name):
    """Saves docs/img/dashboard-NAME.png when FLEET_DASH_SCREENSHOTS names a folder."""
    folder = os.environ.get("FLEET_DASH_SCREENSHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(folder) / f"dashboard-{name}.png"))
