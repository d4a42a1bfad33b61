// views.js: render() and the small views: header, counts by state, permission questions,
// worktrees and remote jobs.

// ---------------------------------------------------------------- render
function render() {
  const now = Date.now();
  if (dirty.structure) rebuildStructure();
  if (dirty.session || dirty.agents) renderHeader();
  if (dirty.agents || dirty.structure) renderCounts();
  if (dirty.perms || dirty.session) renderPermissions();
  if (dirty.structure || (dirty.agents && (UI.filter || UI.stateFilter || UI.groupByType))) rebuildRows();
  renderRows(now);
  if (UI.tab === 'timeline') drawTimelineTab(now);
  if (UI.tab === 'teams' && dirty.teams) renderTeams();
  if (UI.tab === 'worktrees' && dirty.worktrees) renderWorktrees();
  setText($('teams-badge'), S.teams.size ? String(S.teams.size) : '');
  setText($('wt-badge'), S.worktrees.size + S.jobs.size ? String(S.worktrees.size + S.jobs.size) : '');
  if (UI.transcriptAgent) renderTranscriptHead();
  dirty.structure = dirty.agents = dirty.session = dirty.perms = false;
  if (UI.tab === 'timeline') dirty.usage = false;
  if (UI.tab === 'teams') dirty.teams = false;
  if (UI.tab === 'worktrees') dirty.worktrees = false;
}

function renderHeader() {
  const s = S.session;
  if (!s) {
    setText($('session-title'), S.sessionId ? S.sessionId : 'no session open');
    setText($('session-meta'), '');
    setText($('session-cost'), '');
    return;
  }
  const title = s.title || basename(s.folder) || s.id;
  setText($('session-title'), title);
  const meta = [s.folder, s.model || '', s.state, 'started ' + fmtDateTime(s.started_ms),
    S.agents.size + (S.agents.size === 1 ? ' agent' : ' agents')].filter(Boolean).join(' · ');
  setText($('session-meta'), meta);
  setText($('session-cost'), fmtCost(s.cost_usd));
  document.title = 'fleet · ' + title;
}

const countEls = {};
function buildCounts() {
  const box = $('counts');
  for (const st of STATES) {
    const n = h('span', { class: 'n', 'data-testid': 'count-' + st, text: '0' });
    const b = h('button', {
      type: 'button', class: 'count', 'data-state': st, 'aria-pressed': 'false',
      title: 'Show only ' + STATE_LABEL[st] + ' agents',
    }, h('span', { class: 'dot' }), STATE_LABEL[st], n);
    b.addEventListener('click', () => {
      UI.stateFilter = UI.stateFilter === st ? null : st;
      for (const s2 of STATES) setAttr(countEls[s2].btn, 'aria-pressed', UI.stateFilter === s2 ? 'true' : 'false');
      rebuildRows(); renderRows(Date.now());
    });
    countEls[st] = { btn: b, n };
    box.append(b);
  }
}
function renderCounts() {
  const c = {};
  for (const st of STATES) c[st] = 0;
  for (const a of S.agents.values()) c[a.state] = (c[a.state] || 0) + 1;
  for (const st of STATES) {
    setText(countEls[st].n, String(c[st]));
    setAttr(countEls[st].btn, 'data-zero', c[st] ? 'false' : 'true');
  }
}

// ---------------------------------------------------------------- permissions
const permEls = new Map();
function renderPermissions() {
  const box = $('permissions');
  const seen = new Set();
  for (const p of S.perms) {
    seen.add(p.id);
    let e = permEls.get(p.id);
    if (!e) {
      const result = h('span', { class: 'action-result' });
      const answer = async (decision, btns) => {
        for (const b of btns) b.disabled = true;
        const r = await postAction('/api/sessions/' + enc(S.sessionId) + '/permissions/' + enc(p.id), { decision, message: null });
        result.textContent = r.message || (r.ok ? decision : 'failed');
        result.setAttribute('data-ok', r.ok ? 'true' : 'false');
        // The card goes away once the session takes the answer: say what happened elsewhere too.
        toast(r.ok, (decision === 'allow' ? 'Allowed ' : 'Denied ') + p.tool + ': ' + (r.message || (r.ok ? 'done' : 'failed')));
        if (!r.ok) for (const b of btns) b.disabled = false;
      };
      const allow = h('button', { type: 'button', 'data-testid': 'allow' }, 'Allow');
      const deny = h('button', { type: 'button', 'data-testid': 'deny' }, 'Deny');
      allow.addEventListener('click', () => answer('allow', [allow, deny]));
      deny.addEventListener('click', () => answer('deny', [allow, deny]));
      const agent = S.agents.get(p.agent_id);
      const who = agent ? (agent.team_member || agent.description || agent.agent_type) : p.agent_id;
      e = h('div', { class: 'permission', 'data-testid': 'permission', 'data-request-id': p.id },
        h('div', null, h('strong', null, p.tool), ' wanted by ', h('span', { class: 'agent-type' }, who)),
        h('pre', null, p.summary),
        h('div', { class: 'perm-actions' }, allow, deny, result));
      e.__buttons = [allow, deny];
      permEls.set(p.id, e);
      box.append(e);
    }
    const can = !!S.actions.answer_permission;
    for (const b of e.__buttons) b.hidden = !can;
  }
  for (const [id, e] of permEls) if (!seen.has(id)) { e.remove(); permEls.delete(id); }
}

// ---------------------------------------------------------------- worktrees and remote jobs
function agentLabel(id) {
  if (!id) return '';
  const a = S.agents.get(id);
  return a ? (a.team_member || a.agent_type) + (a.description ? ' · ' + a.description : '') : id;
}

function renderWorktrees() {
  const wt = $('worktrees');
  wt.textContent = '';
  const list = Array.from(S.worktrees.values()).sort((a, b) => (a.path < b.path ? -1 : 1));
  for (const w of list) {
    wt.append(h('tr', { 'data-testid': 'worktree', 'data-path': w.path },
      h('td', { class: 'path' }, w.path), h('td', null, w.branch || ''), h('td', { title: w.agent_id || '' }, agentLabel(w.agent_id))));
  }
  $('worktrees-empty').hidden = list.length > 0;
  const jobs = $('remote-jobs');
  jobs.textContent = '';
  const jl = Array.from(S.jobs.values()).sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const j of jl) {
    jobs.append(h('tr', { 'data-testid': 'remote-job', 'data-job-id': j.id, 'data-state': j.state },
      h('td', { class: 'path', title: j.description || '' }, j.id), h('td', null, j.description || ''),
      h('td', null, j.worker || ''), h('td', { class: 'num' }, String(j.attempt)),
      h('td', null, j.state), h('td', { title: j.agent_id || '' }, agentLabel(j.agent_id))));
  }
  $('jobs-empty').hidden = jl.length > 0;
}
