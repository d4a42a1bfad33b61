// main.js: tabs, keys, the once-a-second tick, and booting the page.

// ---------------------------------------------------------------- tabs, keys, ticking
function selectTab(tab) {
  if (!['agents', 'timeline', 'teams', 'worktrees'].includes(tab)) tab = 'agents';
  UI.tab = tab;
  for (const b of document.querySelectorAll('.tabs [role=tab]')) {
    const on = b.getAttribute('data-tab') === tab;
    b.setAttribute('aria-selected', on ? 'true' : 'false');
    b.tabIndex = on ? 0 : -1;
  }
  for (const t of ['agents', 'timeline', 'teams', 'worktrees']) $('view-' + t).hidden = t !== tab;
  writeHash();
  const now = Date.now();
  if (tab === 'agents') renderRows(now);
  if (tab === 'timeline') { drawTimelineTab(now); dirty.usage = false; }
  if (tab === 'teams') { renderTeams(); dirty.teams = false; }
  if (tab === 'worktrees') { renderWorktrees(); dirty.worktrees = false; }
}

function setupTabs() {
  const tabs = Array.from(document.querySelectorAll('.tabs [role=tab]'));
  for (const b of tabs) {
    b.addEventListener('click', () => selectTab(b.getAttribute('data-tab')));
    b.addEventListener('keydown', (ev) => {
      if (ev.key !== 'ArrowRight' && ev.key !== 'ArrowLeft') return;
      const i = tabs.indexOf(b) + (ev.key === 'ArrowRight' ? 1 : -1);
      const next = tabs[(i + tabs.length) % tabs.length];
      next.focus();
      selectTab(next.getAttribute('data-tab'));
    });
  }
}

/** Once a second: running agents' durations, and the timeline's "now" edge. */
function tick() {
  const now = Date.now();
  for (const e of rowEls.values()) {
    const a = e.__agent;
    if (a && !a.ended_ms && !ENDED.has(a.state)) setText(e.__dur, agentDuration(a, now));
  }
  if (UI.tab === 'timeline' && S.session && S.session.state === 'live') drawTimelineTab(now);
}

function init() {
  buildCounts();
  setupTree();
  setupTimeline();
  setupTabs();
  $('tr-close').addEventListener('click', () => closeTranscript(false));
  document.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && !$('transcript').hidden) { closeTranscript(false); return; }
    if (ev.key === '/' && document.activeElement && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) {
      ev.preventDefault(); selectTab('agents'); $('agent-filter').focus();
    }
  });
  const mq = window.matchMedia('(prefers-color-scheme: dark)');
  const recolor = () => { readColors(); if (UI.tab === 'timeline') drawTimelineTab(Date.now()); };
  if (mq.addEventListener) mq.addEventListener('change', recolor);
  window.addEventListener('resize', () => { if (UI.tab === 'timeline') drawTimelineTab(Date.now()); });
  window.addEventListener('hashchange', () => {
    const want = readHash();
    if (want.tab && want.tab !== UI.tab) selectTab(want.tab);
    if (want.session && want.session !== S.sessionId) openSession(want.session, true);
    else if (want.agent && want.agent !== UI.transcriptAgent && S.agents.has(want.agent)) openTranscript(want.agent);
  });
  const want = readHash();
  selectTab(want.tab || 'agents');
  setInterval(tick, 1000);
  openSessionsStream();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
