// fleet dashboard page. Plain JS: no framework, no build step, no external resources.
// Every string from the server (models, repositories, team files) is inserted as text
// (createElement + textContent), never parsed as HTML.
// The JSON shapes are those of crates/fleet-dashboard/src/api.rs.
'use strict';
(function () {
  // ---------------------------------------------------------------- constants and helpers
  const TOKEN = new URLSearchParams(location.search).get('token') || '';
  const STATES = ['running', 'waiting_for_model', 'running_tool', 'waiting_for_approval',
    'idle', 'done', 'failed', 'killed'];
  const STATE_LABEL = {
    running: 'running', waiting_for_model: 'waiting for model', running_tool: 'running tool',
    waiting_for_approval: 'waiting for approval', idle: 'idle', done: 'done', failed: 'failed',
    killed: 'killed',
  };
  const ENDED = new Set(['done', 'failed', 'killed']);
  const ROW_H = 26;          // must match --row-h in the CSS
  const OVERSCAN = 10;       // rows drawn above and below the visible ones
  const TL_ROW = 16;         // timeline row height
  const TL_AXIS = 22;        // timeline axis height
  const TL_LABEL = 220;      // timeline label column width
  const MAX_MARKS = 20000;
  const MAX_USAGE = 20000;
  const MAX_APPLIED = 1000;
  const BOARD = [['pending', 'pending'], ['in_progress', 'in progress'], ['completed', 'completed']];

  window.__fleetDash = { applied: [], agents: 0 };

  const $ = (id) => document.getElementById(id);
  const enc = encodeURIComponent;

  /** A URL of the API with the token (and `params`) in its query. */
  function apiUrl(path, params) {
    const q = new URLSearchParams(params || {});
    q.set('token', TOKEN);
    return path + '?' + q.toString();
  }

  /** Builds an element; strings among `children` become text nodes. */
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === null || v === undefined || v === false) continue;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = String(v);
        else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  /** Sets text only when it changed (keeps the DOM quiet on frequent redraws). */
  function setText(node, text) {
    const t = String(text);
    if (node.__t !== t) { node.__t = t; node.textContent = t; }
  }
  function setAttr(node, name, value) {
    const v = String(value);
    if (node.getAttribute(name) !== v) node.setAttribute(name, v);
  }

  function parseJson(text) {
    try { return JSON.parse(text); } catch (_) { return null; }
  }

  function fmtTokens(n) {
    n = Number(n) || 0;
    if (n < 1000) return String(n);
    if (n < 1e6) return (n / 1e3).toFixed(n < 1e4 ? 1 : 0) + 'k';
    return (n / 1e6).toFixed(n < 1e7 ? 2 : 1) + 'M';
  }
  function fmtCost(c) {
    c = Number(c) || 0;
    if (c === 0) return '$0';
    if (c < 0.01) return '$' + c.toFixed(4);
    if (c < 100) return '$' + c.toFixed(2);
    return '$' + c.toFixed(0);
  }
  function fmtDuration(ms) {
    if (!(ms >= 0)) return '';
    const s = Math.floor(ms / 1000);
    if (s < 60) return s + 's';
    const m = Math.floor(s / 60);
    if (m < 60) return m + 'm ' + String(s % 60).padStart(2, '0') + 's';
    const hr = Math.floor(m / 60);
    return hr + 'h ' + String(m % 60).padStart(2, '0') + 'm';
  }
  function fmtTime(ms) {
    if (!ms) return '';
    const d = new Date(ms);
    return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  }
  function fmtDateTime(ms) {
    if (!ms) return '';
    const d = new Date(ms);
    const today = new Date();
    const sameDay = d.toDateString() === today.toDateString();
    const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
    return sameDay ? time : d.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + time;
  }
  function basename(path) {
    const p = String(path || '').replace(/\/+$/, '');
    const i = p.lastIndexOf('/');
    return i >= 0 ? p.slice(i + 1) || p : p;
  }
  function stateText(a) {
    if (a.state === 'running_tool') return a.tool ? 'running ' + a.tool : 'running tool';
    return STATE_LABEL[a.state] || String(a.state);
  }
  function agentDuration(a, now) {
    if (!a.started_ms) return '';
    const end = a.ended_ms || (ENDED.has(a.state) ? a.started_ms : now);
    return fmtDuration(Math.max(0, end - a.started_ms));
  }
  function agentTokens(a) { return (a.input_tokens || 0) + (a.output_tokens || 0); }

  let toastTimer = 0;
  function toast(ok, message) {
    const t = $('toast');
    t.textContent = message;
    t.setAttribute('data-ok', ok ? 'true' : 'false');
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
  }

  /** POSTs JSON; answers an ActionResult-shaped object whatever happened. */
  async function postAction(path, body) {
    try {
      const res = await fetch(apiUrl(path), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body || {}),
      });
      const data = parseJson(await res.text()) || {};
      if (!res.ok) return { ok: false, message: data.error || data.message || ('HTTP ' + res.status) };
      if (typeof data.ok === 'boolean') return { ok: data.ok, message: String(data.message || '') };
      return { ok: true, message: 'done' };
    } catch (e) {
      return { ok: false, message: 'request failed: ' + (e && e.message ? e.message : e) };
    }
  }

  // ---------------------------------------------------------------- state
  const S = {
    sessions: [],
    sessionId: null,
    session: null,
    seq: 0,
    loaded: false,             // a snapshot of this session has been applied
    agents: new Map(),         // id -> AgentNode
    children: new Map(),       // parent id ('' for roots) -> [AgentNode], ordered by start
    tlOrder: [],               // agents ordered by start, for the timeline
    teams: new Map(),          // name -> Team
    worktrees: new Map(),      // path -> Worktree
    jobs: new Map(),           // id -> RemoteJob
    usage: [],
    marks: [],
    marksByAgent: new Map(),   // agent id -> [ToolMark]
    perms: [],
    actions: { stop_task: false, answer_permission: false, message_member: false },
  };
  const dirty = { structure: true, agents: true, session: true, teams: true, worktrees: true, perms: true, usage: true };
  const UI = {
    tab: 'agents',
    filter: '',
    stateFilter: null,
    groupByType: false,
    collapsed: new Set(),
    openGroups: new Set(),
    rows: [],                 // what the tree shows: {k:'a', a, depth, kids, ctx} | {k:'g', type, ...}
    active: -1,               // keyboard cursor in rows
    transcriptAgent: null,
    autoPicked: false,        // the open session was chosen by the page, not by the user or the URL
    tlZoom: 1,
    tlStart: 0,               // fraction of the span at the left edge
  };

  // ---------------------------------------------------------------- URL hash (remembered selection)
  function readHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    return { session: p.get('session'), agent: p.get('agent'), tab: p.get('tab') };
  }
  function writeHash() {
    const p = new URLSearchParams();
    if (S.sessionId) p.set('session', S.sessionId);
    if (UI.tab !== 'agents') p.set('tab', UI.tab);
    if (UI.transcriptAgent) p.set('agent', UI.transcriptAgent);
    const hash = '#' + p.toString();
    if (location.hash !== hash) history.replaceState(null, '', location.pathname + location.search + hash);
  }

  // ---------------------------------------------------------------- sessions list
  const sessionEls = new Map();
  let sessionsPoll = 0;

  async function loadSessions() {
    try {
      const res = await fetch(apiUrl('/api/sessions'));
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const list = await res.json();
      setSessions(Array.isArray(list) ? list : []);
      showMainError(null);
    } catch (e) {
      showMainError('Cannot list sessions: ' + (e && e.message ? e.message : e));
    }
    // Without an open session there is no event stream to announce new sessions: ask again.
    clearTimeout(sessionsPoll);
    if (!S.sessionId) sessionsPoll = setTimeout(loadSessions, 3000);
  }

  function setSessions(list) {
    S.sessions = list;
    const ul = $('session-list');
    const seen = new Set();
    let prev = null;
    for (const s of list) {
      seen.add(s.id);
      let li = sessionEls.get(s.id);
      if (!li) { li = makeSessionRow(s.id); sessionEls.set(s.id, li); }
      fillSessionRow(li, s);
      const next = prev ? prev.nextSibling : ul.firstChild;
      if (next !== li) ul.insertBefore(li, next);
      prev = li;
    }
    for (const [id, li] of sessionEls) if (!seen.has(id)) { li.remove(); sessionEls.delete(id); }
    $('session-empty').hidden = list.length > 0;
    if (S.sessionId) {
      const cur = list.find((s) => s.id === S.sessionId);
      if (cur && S.session && cur.updated_ms >= (S.session.updated_ms || 0)) { S.session = cur; dirty.session = true; scheduleRender(); }
      // A session the page picked by itself gives way to a live one that starts later.
      const live = newestLive(list);
      if (UI.autoPicked && live && live.id !== S.sessionId && (!cur || cur.state !== 'live' || live.started_ms > cur.started_ms)) openSession(live.id, false);
    } else if (list.length) {
      const want = readHash().session;
      const chosen = list.find((s) => s.id === want);
      const pick = chosen || newestLive(list) || list[0];
      openSession(pick.id, false);
      UI.autoPicked = !chosen;
    }
  }

  /** The live session started last (the list itself is ordered by last activity). */
  function newestLive(list) {
    let best = null;
    for (const s of list) if (s.state === 'live' && (!best || s.started_ms > best.started_ms)) best = s;
    return best;
  }

  function makeSessionRow(id) {
    const b = h('button', { type: 'button', class: 'session-row', 'data-testid': 'session-row', 'data-session-id': id });
    b.__folder = h('span', { class: 'sr-folder' });
    b.__state = h('span', { class: 'sr-state' });
    b.__title = h('span', { class: 'sr-title' });
    b.__start = h('span');
    b.__model = h('span', { class: 'sr-model' });
    b.__agents = h('span');
    b.__cost = h('span', { class: 'sr-cost' });
    b.append(h('span', { class: 'sr-line' }, b.__folder, b.__state), b.__title,
      h('span', { class: 'sr-line sr-meta' }, b.__start, b.__model, b.__agents, b.__cost));
    b.addEventListener('click', () => openSession(id, true));
    return h('li', null, b);
  }

  function fillSessionRow(li, s) {
    const b = li.firstChild;
    setAttr(b, 'data-state', s.state);
    setAttr(b, 'aria-current', s.id === S.sessionId ? 'true' : 'false');
    setAttr(b, 'title', s.folder + '\n' + s.id);
    setText(b.__folder, basename(s.folder) || s.folder || s.id);
    setText(b.__state, s.state);
    setAttr(b.__state, 'data-state', s.state);
    setText(b.__title, s.title || '');
    setText(b.__start, fmtDateTime(s.started_ms));
    setText(b.__model, s.model || '');
    setText(b.__agents, s.agents + (s.agents === 1 ? ' agent' : ' agents'));
    setText(b.__cost, fmtCost(s.cost_usd));
  }

  function markCurrentSession() {
    for (const [id, li] of sessionEls) setAttr(li.firstChild, 'aria-current', id === S.sessionId ? 'true' : 'false');
  }

  // ---------------------------------------------------------------- opening a session
  let gen = 0;               // bumps when the open session changes; stale callbacks check it
  let es = null;
  let esTimer = 0;
  let backoff = 500;

  async function openSession(id, byUser) {
    if (id === S.sessionId && S.session) return;
    gen++;
    closeStream();
    clearTimeout(sessionsPoll);
    const keepAgent = !byUser && readHash().session === id ? readHash().agent : null;
    if (byUser) UI.autoPicked = false;
    S.sessionId = id;
    resetSessionState();
    closeTranscript(true);
    markCurrentSession();
    writeHash();
    const g = gen;
    await loadSnapshot(g);
    if (keepAgent && g === gen) openTranscript(keepAgent);
  }

  function resetSessionState() {
    S.session = S.sessions.find((s) => s.id === S.sessionId) || null;
    S.seq = 0;
    S.loaded = false;
    S.agents = new Map(); S.children = new Map(); S.tlOrder = [];
    S.teams = new Map(); S.worktrees = new Map(); S.jobs = new Map();
    S.usage = []; S.marks = []; S.marksByAgent = new Map(); S.perms = [];
    S.actions = { stop_task: false, answer_permission: false, message_member: false };
    UI.collapsed.clear(); UI.openGroups.clear(); UI.active = -1;
    for (const k of Object.keys(dirty)) dirty[k] = true;
    queue.length = 0;
    for (const e of rowEls.values()) e.remove();
    rowEls.clear();
    teamEls.clear();
    $('teams').textContent = '';
    $('permissions').textContent = '';
    permEls.clear();
    $('agent-tree').scrollTop = 0;
    scheduleRender();
  }

  async function loadSnapshot(g) {
    try {
      const res = await fetch(apiUrl('/api/sessions/' + enc(S.sessionId)));
      if (g !== gen) return;
      if (!res.ok) {
        const body = parseJson(await res.text()) || {};
        throw new Error(body.error || ('HTTP ' + res.status));
      }
      const snap = await res.json();
      if (g !== gen) return;
      queue.length = 0;
      enqueue({ type: 'snapshot', snap });
      showMainError(null);
      openStream(g);
    } catch (e) {
      if (g !== gen) return;
      showMainError('Cannot load session ' + S.sessionId + ': ' + (e && e.message ? e.message : e));
      esTimer = setTimeout(() => { if (g === gen) loadSnapshot(g); }, backoff);
      backoff = Math.min(backoff * 2, 15000);
    }
  }

  function showMainError(msg) {
    const p = $('main-error');
    p.textContent = msg || '';
    p.hidden = !msg;
  }

  function setConnection(status) {
    const c = $('connection');
    setAttr(c, 'data-status', status);
    setText(c, status === 'open' ? 'live' : (S.sessionId ? 'reconnecting…' : 'offline'));
  }

  function closeStream() {
    clearTimeout(esTimer);
    if (es) { es.close(); es = null; }
    setConnection('closed');
  }

  /** The session's event stream, reopened with backoff from the last applied seq. */
  function openStream(g) {
    clearTimeout(esTimer);
    if (es) { es.close(); es = null; }
    const src = new EventSource(apiUrl('/api/sessions/' + enc(S.sessionId) + '/events', { since: String(S.seq) }));
    es = src;
    src.onopen = () => { if (g === gen) { backoff = 500; setConnection('open'); } };
    src.addEventListener('batch', (ev) => {
      if (g !== gen) return;
      const b = parseJson(ev.data);
      if (b) enqueue({ type: 'batch', b });
    });
    src.addEventListener('snapshot', (ev) => {
      if (g !== gen) return;
      const snap = parseJson(ev.data);
      if (snap) enqueue({ type: 'snapshot', snap });
    });
    src.addEventListener('sessions', (ev) => {
      const list = parseJson(ev.data);
      if (Array.isArray(list)) setSessions(list);
    });
    src.onerror = () => {
      if (g !== gen) return;
      src.close();
      if (es === src) es = null;
      setConnection('closed');
      esTimer = setTimeout(() => { if (g === gen) openStream(g); }, backoff);
      backoff = Math.min(backoff * 2, 15000);
    };
  }

  // ---------------------------------------------------------------- applying snapshots and batches
  const queue = [];
  let flushPending = false;
  let flushFallback = 0;

  function enqueue(item) {
    queue.push(item);
    scheduleRender();
  }

  /** Draws in the next animation frame (or soon, when the tab is hidden and frames stop). */
  function scheduleRender() {
    if (flushPending) return;
    flushPending = true;
    requestAnimationFrame(flush);
    flushFallback = setTimeout(flush, 400);
  }

  function flush() {
    if (!flushPending) return;
    flushPending = false;
    clearTimeout(flushFallback);
    const items = queue.splice(0);
    const applied = [];
    for (const it of items) {
      if (it.type === 'snapshot') {
        // The stream opens with a snapshot; the same seq as the one fetched is the same state.
        if (S.loaded && it.snap.seq === S.seq) continue;
        loadSnapshotData(it.snap);
        applied.length = 0;
        continue;
      }
      const b = it.b;
      if (typeof b.seq !== 'number') continue;
      if (b.seq <= S.seq) continue; // already in the snapshot or a repeat after reconnecting
      applyBatch(b);
      applied.push(b);
    }
    render();
    const now = Date.now();
    const log = window.__fleetDash.applied;
    for (const b of applied) log.push({ seq: b.seq, newest_event_ms: b.newest_event_ms == null ? null : b.newest_event_ms, applied_ms: now });
    if (log.length > MAX_APPLIED) log.splice(0, log.length - MAX_APPLIED);
    window.__fleetDash.agents = S.agents.size;
  }

  function loadSnapshotData(snap) {
    const keepScroll = $('agent-tree').scrollTop;
    S.session = snap.session || S.session;
    S.seq = snap.seq || 0;
    S.loaded = true;
    S.agents = new Map();
    for (const a of snap.agents || []) S.agents.set(a.id, a);
    S.teams = new Map((snap.teams || []).map((t) => [t.name, t]));
    S.worktrees = new Map((snap.worktrees || []).map((w) => [w.path, w]));
    S.jobs = new Map((snap.remote_jobs || []).map((j) => [j.id, j]));
    S.usage = (snap.usage || []).slice();
    S.marks = [];
    S.marksByAgent = new Map();
    addMarks(snap.marks || []);
    S.perms = snap.pending_permissions || [];
    S.actions = snap.actions || S.actions;
    for (const k of Object.keys(dirty)) dirty[k] = true;
    $('agent-tree').scrollTop = keepScroll;
  }

  function applyBatch(b) {
    S.seq = b.seq;
    if (b.session) {
      S.session = b.session;
      dirty.session = true;
      const li = sessionEls.get(b.session.id);
      if (li) fillSessionRow(li, b.session);
    }
    if (b.agents && b.agents.length) {
      for (const a of b.agents) {
        const old = S.agents.get(a.id);
        if (!old) { S.agents.set(a.id, a); dirty.structure = true; continue; }
        if (old.parent_id !== a.parent_id || old.started_ms !== a.started_ms) dirty.structure = true;
        // In place: the tree's rows, the children lists and the timeline hold this object.
        for (const k of Object.keys(old)) if (!(k in a)) delete old[k];
        Object.assign(old, a);
      }
      dirty.agents = true;
    }
    if (b.teams && b.teams.length) { for (const t of b.teams) S.teams.set(t.name, t); dirty.teams = true; }
    if (b.worktrees && b.worktrees.length) { for (const w of b.worktrees) S.worktrees.set(w.path, w); dirty.worktrees = true; }
    if (b.remote_jobs && b.remote_jobs.length) { for (const j of b.remote_jobs) S.jobs.set(j.id, j); dirty.worktrees = true; }
    if (b.usage && b.usage.length) {
      for (const u of b.usage) S.usage.push(u);
      // A point per batch adds up over hours: thin the older half (the plot is ~1,000 px wide).
      if (S.usage.length > MAX_USAGE) {
        const half = S.usage.length >> 1;
        S.usage = S.usage.slice(0, half).filter((_, i) => i % 2 === 0).concat(S.usage.slice(half));
      }
      dirty.usage = true;
    }
    if (b.marks && b.marks.length) { addMarks(b.marks); dirty.usage = true; }
    if (b.pending_permissions) { S.perms = b.pending_permissions; dirty.perms = true; }
  }

  function addMarks(marks) {
    for (const m of marks) {
      S.marks.push(m);
      let list = S.marksByAgent.get(m.agent_id);
      if (!list) { list = []; S.marksByAgent.set(m.agent_id, list); }
      list.push(m);
    }
    if (S.marks.length > MAX_MARKS) {
      const drop = S.marks.splice(0, S.marks.length - MAX_MARKS);
      for (const m of drop) {
        const list = S.marksByAgent.get(m.agent_id);
        if (list && list[0] === m) list.shift();
        if (list && !list.length) S.marksByAgent.delete(m.agent_id);
      }
    }
  }

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

  // ---------------------------------------------------------------- agent tree (virtualised)
  function byStart(a, b) {
    return (a.started_ms || 0) - (b.started_ms || 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  function rebuildStructure() {
    const ch = new Map();
    for (const a of S.agents.values()) {
      const p = a.parent_id && S.agents.has(a.parent_id) && a.parent_id !== a.id ? a.parent_id : '';
      let list = ch.get(p);
      if (!list) { list = []; ch.set(p, list); }
      list.push(a);
    }
    for (const list of ch.values()) list.sort(byStart);
    S.children = ch;
    S.tlOrder = Array.from(S.agents.values()).sort(byStart);
  }

  function matches(a, f) {
    return a.id.toLowerCase().includes(f) || String(a.agent_type || '').toLowerCase().includes(f) ||
      String(a.description || '').toLowerCase().includes(f) || String(a.team_member || '').toLowerCase().includes(f);
  }

  function rebuildRows() {
    const f = UI.filter.trim().toLowerCase();
    const sf = UI.stateFilter;
    const pass = (a) => (!sf || a.state === sf) && (!f || matches(a, f));
    const rows = [];
    if (UI.groupByType) {
      const groups = new Map();
      for (const a of S.agents.values()) {
        if (!pass(a)) continue;
        const t = a.agent_type || '?';
        let g = groups.get(t);
        if (!g) { g = { k: 'g', type: t, agents: [], counts: {}, tokens: 0, cost: 0 }; groups.set(t, g); }
        g.agents.push(a);
        g.counts[a.state] = (g.counts[a.state] || 0) + 1;
        g.tokens += agentTokens(a);
        g.cost += a.cost_usd || 0;
      }
      const list = Array.from(groups.values()).sort((x, y) => y.agents.length - x.agents.length || (x.type < y.type ? -1 : 1));
      for (const g of list) {
        rows.push(g);
        if (UI.openGroups.has(g.type)) {
          g.agents.sort(byStart);
          for (const a of g.agents) rows.push({ k: 'a', a, depth: 1, kids: false, ctx: false });
        }
      }
    } else {
      const filtering = !!(f || sf);
      let include = null;
      if (filtering) {
        include = new Map(); // id -> true (match) | false (ancestor shown for context)
        for (const a of S.agents.values()) {
          if (!pass(a)) continue;
          include.set(a.id, true);
          let p = a.parent_id;
          let guard = 0;
          while (p && S.agents.has(p) && !include.has(p) && guard++ < 10000) { include.set(p, false); p = S.agents.get(p).parent_id; }
        }
      }
      // Iterative depth-first walk (deep nesting must not overflow the stack).
      const stack = [];
      const roots = S.children.get('') || [];
      for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i], 0]);
      const seen = new Set();
      while (stack.length) {
        const [a, depth] = stack.pop();
        if (seen.has(a.id)) continue;
        seen.add(a.id);
        if (include && !include.has(a.id)) continue;
        const kids = S.children.get(a.id) || [];
        rows.push({ k: 'a', a, depth, kids: kids.length > 0, ctx: include ? include.get(a.id) === false : false });
        if (!filtering && UI.collapsed.has(a.id)) continue;
        for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], depth + 1]);
      }
    }
    UI.rows = rows;
    if (UI.active >= rows.length) UI.active = rows.length - 1;
    const shown = rows.filter((r) => r.k === 'a').length;
    setText($('tree-info'), UI.groupByType
      ? rows.filter((r) => r.k === 'g').length + ' types'
      : (f || sf ? shown + ' of ' + S.agents.size + ' agents' : ''));
  }

  // Row elements, keyed by what they show, reused across redraws.
  const rowEls = new Map();
  let rowSerial = 0;

  function rowKey(r) { return r.k === 'g' ? 'g:' + r.type : 'a:' + r.a.id; }

  function renderRows(now) {
    const vp = $('agent-tree');
    const spacer = $('tree-spacer');
    const total = UI.rows.length;
    const height = total * ROW_H + 'px';
    if (spacer.style.height !== height) spacer.style.height = height;
    const top = vp.scrollTop;
    const viewH = vp.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(total, Math.ceil((top + viewH) / ROW_H) + OVERSCAN);
    const want = new Set();
    for (let i = first; i < last; i++) want.add(rowKey(UI.rows[i]));
    // Rows that scrolled out are recycled for the ones that scrolled in (no churn of nodes).
    const free = { a: [], g: [] };
    for (const [k, e] of rowEls) if (!want.has(k)) { rowEls.delete(k); free[k.charAt(0)].push(e); }
    for (let i = first; i < last; i++) {
      const r = UI.rows[i];
      const key = rowKey(r);
      let e = rowEls.get(key);
      if (!e) {
        e = free[r.k].pop() || (r.k === 'g' ? makeGroupRow() : makeAgentRow());
        if (!e.parentNode) spacer.append(e);
        rowEls.set(key, e);
      }
      e.__index = i;
      const y = 'translateY(' + (i * ROW_H) + 'px)';
      if (e.style.transform !== y) e.style.transform = y;
      e.classList.toggle('active', i === UI.active);
      if (r.k === 'g') fillGroupRow(e, r); else fillAgentRow(e, r, now);
    }
    for (const e of free.a) e.remove();
    for (const e of free.g) e.remove();
    const act = UI.rows[UI.active];
    const actEl = act && rowEls.get(rowKey(act));
    if (actEl) setAttr(vp, 'aria-activedescendant', actEl.id); else vp.removeAttribute('aria-activedescendant');
  }

  function makeAgentRow() {
    const e = h('div', { class: 'row row-grid agent-row', 'data-testid': 'agent-node', role: 'treeitem', id: 'tr-row-' + (++rowSerial) });
    e.__twisty = h('button', { type: 'button', class: 'twisty', tabindex: '-1', 'aria-label': 'collapse or expand' });
    e.__pad = h('span', { class: 'twisty-pad' });
    e.__type = h('span', { class: 'agent-type' });
    e.__kind = h('span', { class: 'agent-kind' });
    e.__desc = h('span', { class: 'agent-desc' });
    e.__name = h('span', { class: 'name' }, e.__twisty, e.__pad, e.__type, e.__kind, e.__desc);
    e.__dot = h('span', { class: 'dot' });
    e.__stateText = h('span');
    e.__state = h('span', { class: 'agent-state' }, e.__dot, e.__stateText);
    e.__turns = h('span', { class: 'num agent-turns c-turns' });
    e.__tokens = h('span', { class: 'num agent-tokens c-tokens' });
    e.__cost = h('span', { class: 'num agent-cost' });
    e.__dur = h('span', { class: 'num agent-duration' });
    e.__actions = h('span', { class: 'row-actions' });
    e.__stop = h('button', { type: 'button', 'data-testid': 'stop-task', title: 'Stop this agent' }, 'stop');
    e.append(e.__name, e.__state, e.__turns, e.__tokens, e.__cost, e.__dur, e.__actions);
    return e;
  }

  function fillAgentRow(e, r, now) {
    const a = r.a;
    if (e.__agent && e.__agent.id !== a.id) e.__stop.disabled = false; // recycled for another agent
    e.__agent = a;
    setAttr(e, 'data-agent-id', a.id);
    setAttr(e, 'data-state', a.state);
    setAttr(e, 'data-kind', a.kind);
    setAttr(e, 'aria-level', String(r.depth + 1));
    if (r.kids) setAttr(e, 'aria-expanded', UI.collapsed.has(a.id) ? 'false' : 'true'); else e.removeAttribute('aria-expanded');
    e.classList.toggle('context', !!r.ctx);
    e.classList.toggle('selected', UI.transcriptAgent === a.id);
    const pad = Math.min(r.depth, 24) * 14 + 'px';
    if (e.__name.style.paddingLeft !== pad) e.__name.style.paddingLeft = pad;
    e.__twisty.hidden = !r.kids;
    e.__pad.hidden = r.kids;
    setText(e.__twisty, UI.collapsed.has(a.id) ? '▸' : '▾');
    setText(e.__type, a.team_member || a.agent_type || a.id);
    setText(e.__kind, a.kind);
    setText(e.__desc, a.description || '');
    const st = stateText(a);
    setText(e.__stateText, st);
    setAttr(e.__state, 'data-state', a.state);
    setAttr(e.__dot, 'data-state', a.state);
    setAttr(e, 'title', a.id + (a.description ? ' — ' + a.description : '') + (a.error ? '\n' + a.error : ''));
    setText(e.__turns, String(a.turns || 0));
    setText(e.__tokens, fmtTokens(agentTokens(a)));
    setAttr(e.__tokens, 'title', 'in ' + (a.input_tokens || 0) + ' / out ' + (a.output_tokens || 0));
    setText(e.__cost, fmtCost(a.cost_usd));
    setText(e.__dur, agentDuration(a, now));
    const canStop = !!(a.task_id && S.actions.stop_task && !ENDED.has(a.state));
    if (canStop && e.__stop.parentNode !== e.__actions) e.__actions.append(e.__stop);
    if (!canStop && e.__stop.parentNode) { e.__stop.remove(); e.__stop.disabled = false; }
  }

  function makeGroupRow() {
    const e = h('div', { class: 'row row-grid group-row', 'data-testid': 'agent-group', role: 'treeitem', id: 'tr-row-' + (++rowSerial) });
    e.__twisty = h('span', { class: 'twisty' });
    e.__type = h('span', { class: 'agent-type' });
    e.__n = h('span', { class: 'agent-kind' });
    e.__states = h('span', { class: 'group-states' });
    // The state chips take the state and turns columns: eight counts need the room.
    e.append(h('span', { class: 'name' }, e.__twisty, e.__type, e.__n), e.__states,
      e.__tokens = h('span', { class: 'num c-tokens' }), e.__cost = h('span', { class: 'num' }), h('span'), h('span'));
    return e;
  }

  function fillGroupRow(e, g) {
    e.__group = g;
    setAttr(e, 'data-type', g.type);
    setAttr(e, 'aria-level', '1');
    setAttr(e, 'aria-expanded', UI.openGroups.has(g.type) ? 'true' : 'false');
    setText(e.__twisty, UI.openGroups.has(g.type) ? '▾' : '▸');
    setText(e.__type, g.type);
    setText(e.__n, String(g.agents.length));
    e.__states.textContent = '';
    for (const st of STATES) {
      const n = g.counts[st];
      if (!n) continue;
      e.__states.append(h('span', { class: 'gs', 'data-state': st, title: STATE_LABEL[st] }, h('span', { class: 'dot' }), String(n)));
    }
    setText(e.__tokens, fmtTokens(g.tokens));
    setText(e.__cost, fmtCost(g.cost));
  }

  function toggleCollapse(id) {
    if (UI.collapsed.has(id)) UI.collapsed.delete(id); else UI.collapsed.add(id);
    rebuildRows(); renderRows(Date.now());
  }
  function toggleGroup(type) {
    if (UI.openGroups.has(type)) UI.openGroups.delete(type); else UI.openGroups.add(type);
    rebuildRows(); renderRows(Date.now());
  }

  async function stopAgent(a, button) {
    if (!a.task_id) return;
    button.disabled = true;
    const r = await postAction('/api/sessions/' + enc(S.sessionId) + '/tasks/' + enc(a.task_id) + '/stop', {});
    button.disabled = false;
    toast(r.ok, (r.ok ? 'Stop ' : 'Could not stop ') + (a.description || a.agent_type || a.id) + ': ' + r.message);
  }

  function setupTree() {
    const vp = $('agent-tree');
    vp.addEventListener('scroll', () => renderRows(Date.now()), { passive: true });
    vp.addEventListener('click', (ev) => {
      const row = ev.target.closest('.row');
      if (!row) return;
      UI.active = row.__index;
      if (row.__group) { toggleGroup(row.__group.type); return; }
      const a = row.__agent;
      if (!a) return;
      if (ev.target.closest('[data-testid=stop-task]')) { stopAgent(a, ev.target.closest('button')); return; }
      if (ev.target.closest('.twisty')) { toggleCollapse(a.id); return; }
      openTranscript(a.id);
      renderRows(Date.now());
    });
    vp.addEventListener('keydown', (ev) => {
      if (ev.target !== vp) return;
      const n = UI.rows.length;
      if (!n) return;
      const page = Math.max(1, Math.floor(vp.clientHeight / ROW_H) - 1);
      let i = UI.active < 0 ? 0 : UI.active;
      const r = UI.rows[i];
      switch (ev.key) {
        case 'ArrowDown': i = Math.min(n - 1, UI.active + 1); break;
        case 'ArrowUp': i = Math.max(0, i - 1); break;
        case 'PageDown': i = Math.min(n - 1, i + page); break;
        case 'PageUp': i = Math.max(0, i - page); break;
        case 'Home': i = 0; break;
        case 'End': i = n - 1; break;
        case 'ArrowRight':
          if (r.k === 'g' && !UI.openGroups.has(r.type)) toggleGroup(r.type);
          else if (r.k === 'a' && r.kids && UI.collapsed.has(r.a.id)) toggleCollapse(r.a.id);
          ev.preventDefault(); return;
        case 'ArrowLeft':
          if (r.k === 'g' && UI.openGroups.has(r.type)) toggleGroup(r.type);
          else if (r.k === 'a' && r.kids && !UI.collapsed.has(r.a.id)) toggleCollapse(r.a.id);
          ev.preventDefault(); return;
        case 'Enter': case ' ':
          if (r.k === 'g') toggleGroup(r.type); else openTranscript(r.a.id);
          ev.preventDefault(); renderRows(Date.now()); return;
        default: return;
      }
      ev.preventDefault();
      UI.active = i;
      if (i * ROW_H < vp.scrollTop) vp.scrollTop = i * ROW_H;
      else if ((i + 1) * ROW_H > vp.scrollTop + vp.clientHeight) vp.scrollTop = (i + 1) * ROW_H - vp.clientHeight;
      renderRows(Date.now());
    });
    let filterTimer = 0;
    $('agent-filter').addEventListener('input', (ev) => {
      clearTimeout(filterTimer);
      filterTimer = setTimeout(() => {
        UI.filter = ev.target.value;
        UI.active = -1;
        vp.scrollTop = 0;
        rebuildRows(); renderRows(Date.now());
      }, 80);
    });
    $('group-by-type').addEventListener('change', (ev) => {
      UI.groupByType = ev.target.checked;
      UI.active = -1;
      vp.scrollTop = 0;
      rebuildRows(); renderRows(Date.now());
    });
    new ResizeObserver(() => renderRows(Date.now())).observe(vp);
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

  // ---------------------------------------------------------------- timeline and usage plot
  let cssColors = {};
  function readColors() {
    const cs = getComputedStyle(document.documentElement);
    cssColors = {};
    for (const name of ['--fg', '--muted', '--grid', '--border', '--panel', '--plot-cost', '--plot-tokens', '--mark', '--err', '--accent', '--active']) {
      cssColors[name] = cs.getPropertyValue(name).trim();
    }
    for (const st of STATES) cssColors[st] = cs.getPropertyValue('--st-' + st).trim();
  }

  /** Sizes a canvas for the device's pixel ratio; answers its 2D context in CSS pixels. */
  function fitCanvas(cv, cssW, cssH) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(cssW * dpr));
    const hgt = Math.max(1, Math.round(cssH * dpr));
    if (cv.width !== w) cv.width = w;
    if (cv.height !== hgt) cv.height = hgt;
    if (cv.style.height !== cssH + 'px') cv.style.height = cssH + 'px';
    const ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);
    return ctx;
  }

  function sessionSpan(now) {
    let t0 = Infinity;
    let t1 = 0;
    for (const a of S.tlOrder) {
      if (a.started_ms && a.started_ms < t0) t0 = a.started_ms;
      const end = a.ended_ms || (ENDED.has(a.state) ? a.started_ms : now);
      if (end > t1) t1 = end;
    }
    if (S.session) {
      if (S.session.started_ms && S.session.started_ms < t0) t0 = S.session.started_ms;
      if (S.session.state === 'live') t1 = Math.max(t1, now);
      else t1 = Math.max(t1, S.session.updated_ms || 0);
    }
    if (!isFinite(t0)) { t0 = now - 60000; t1 = now; }
    if (t1 <= t0) t1 = t0 + 1000;
    return [t0, t1];
  }

  /** Tick times between vs and ve at round offsets from the origin t0 (0s, 30s, 1m, …). */
  function timeTicks(vs, ve, width, t0) {
    const span = ve - vs;
    const steps = [1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 144e5, 864e5];
    const want = Math.max(2, Math.floor(width / 80));
    let step = steps[steps.length - 1];
    for (const s of steps) if (span / s <= want) { step = s; break; }
    const out = [];
    for (let rel = Math.ceil((vs - t0) / step) * step; t0 + rel <= ve; rel += step) out.push(t0 + rel);
    return out;
  }
  function tickLabel(t, t0) {
    const s = Math.round((t - t0) / 1000);
    if (s < 60) return s + 's';
    if (s % 60) return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's';
    const m = s / 60;
    if (m < 60) return m + 'm';
    return Math.floor(m / 60) + 'h' + (m % 60 ? String(m % 60).padStart(2, '0') : '');
  }

  function drawTimelineTab(now) {
    if (!cssColors.fg) readColors();
    drawUsage();
    drawTimeline(now);
  }

  function tlView(now) {
    const [t0, t1] = sessionSpan(now);
    const span = (t1 - t0) / UI.tlZoom;
    const start = t0 + (t1 - t0) * UI.tlStart;
    return { t0, t1, vs: start, ve: start + span };
  }

  function drawTimeline(now) {
    const wrap = $('timeline-scroll');
    const inner = $('timeline-inner');
    const cv = $('timeline');
    const rows = S.tlOrder;
    const totalH = TL_AXIS + rows.length * TL_ROW;
    const viewH = Math.max(60, wrap.clientHeight);
    const ih = Math.max(totalH, viewH) + 'px';
    if (inner.style.height !== ih) inner.style.height = ih;
    const W = Math.max(200, wrap.clientWidth);
    const H = Math.min(viewH, Math.max(totalH, 60));
    const ctx = fitCanvas(cv, W, H);
    const v = tlView(now);
    const plotW = W - TL_LABEL - 8;
    const x = (t) => TL_LABEL + ((t - v.vs) / (v.ve - v.vs)) * plotW;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    // grid and axis
    ctx.strokeStyle = cssColors['--grid'];
    ctx.fillStyle = cssColors['--muted'];
    ctx.lineWidth = 1;
    for (const t of timeTicks(v.vs, v.ve, plotW, v.t0)) {
      const xx = Math.round(x(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(xx, TL_AXIS - 4); ctx.lineTo(xx, H); ctx.stroke();
      ctx.fillText(tickLabel(t, v.t0), xx + 3, TL_AXIS / 2);
    }
    const scroll = wrap.scrollTop;
    const first = Math.max(0, Math.floor(scroll / TL_ROW));
    const last = Math.min(rows.length, first + Math.ceil((H - TL_AXIS) / TL_ROW) + 1);
    ctx.save();
    ctx.beginPath(); ctx.rect(0, TL_AXIS, W, H - TL_AXIS); ctx.clip();
    for (let i = first; i < last; i++) {
      const a = rows[i];
      const y = TL_AXIS + i * TL_ROW - scroll;
      if (UI.transcriptAgent === a.id) { ctx.fillStyle = cssColors['--active']; ctx.fillRect(0, y, W, TL_ROW); }
      ctx.fillStyle = cssColors['--fg'];
      const label = (a.team_member || a.agent_type || a.id) + (a.description ? ' · ' + a.description : '');
      ctx.fillText(clipText(ctx, label, TL_LABEL - 10), 4, y + TL_ROW / 2);
      const end = a.ended_ms || (ENDED.has(a.state) ? (a.started_ms || now) : now);
      const xs = Math.max(TL_LABEL, x(a.started_ms || v.t0));
      const xe = Math.min(W, Math.max(x(end), x(a.started_ms || v.t0) + 2));
      if (xe > TL_LABEL && xs < W) {
        ctx.fillStyle = cssColors[a.state] || cssColors['--muted'];
        ctx.globalAlpha = ENDED.has(a.state) ? 0.75 : 1;
        ctx.fillRect(xs, y + 3, Math.max(2, xe - xs), TL_ROW - 6);
        ctx.globalAlpha = 1;
      }
      const marks = S.marksByAgent.get(a.id);
      if (marks) {
        for (const m of marks) {
          const mx = x(m.t_ms);
          if (mx < TL_LABEL || mx > W) continue;
          ctx.fillStyle = m.is_error ? cssColors['--err'] : cssColors['--mark'];
          ctx.fillRect(Math.round(mx), y + 1, 1, TL_ROW - 2);
        }
      }
    }
    ctx.restore();
    if (!rows.length) { ctx.fillStyle = cssColors['--muted']; ctx.fillText('no agents yet', TL_LABEL, TL_AXIS + 14); }
  }

  function clipText(ctx, text, maxW) {
    if (ctx.measureText(text).width <= maxW) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= maxW) lo = mid; else hi = mid - 1;
    }
    return text.slice(0, lo) + '…';
  }

  function timelineHit(ev) {
    const cv = $('timeline');
    const rect = cv.getBoundingClientRect();
    const y = ev.clientY - rect.top;
    if (y < TL_AXIS) return null;
    const i = Math.floor((y - TL_AXIS + $('timeline-scroll').scrollTop) / TL_ROW);
    return S.tlOrder[i] || null;
  }

  function setupTimeline() {
    const wrap = $('timeline-scroll');
    const cv = $('timeline');
    const tip = $('tooltip');
    wrap.addEventListener('scroll', () => { if (UI.tab === 'timeline') drawTimeline(Date.now()); }, { passive: true });
    cv.addEventListener('mousemove', (ev) => {
      const a = timelineHit(ev);
      if (!a) { tip.hidden = true; return; }
      const now = Date.now();
      const lines = [(a.team_member || a.agent_type) + ' · ' + a.kind + ' · ' + stateText(a)];
      if (a.description) lines.push(a.description);
      lines.push(agentDuration(a, now) + ' · ' + (a.turns || 0) + ' turns · ' + fmtTokens(agentTokens(a)) + ' tokens · ' + fmtCost(a.cost_usd));
      const marks = S.marksByAgent.get(a.id);
      if (marks && marks.length) {
        const rect = cv.getBoundingClientRect();
        const v = tlView(now);
        const t = v.vs + ((ev.clientX - rect.left - TL_LABEL) / (rect.width - TL_LABEL - 8)) * (v.ve - v.vs);
        let best = null;
        for (const m of marks) if (!best || Math.abs(m.t_ms - t) < Math.abs(best.t_ms - t)) best = m;
        if (best && Math.abs(best.t_ms - t) < (v.ve - v.vs) / 100) lines.push('tool ' + best.tool + (best.is_error ? ' (error)' : '') + ' at ' + fmtTime(best.t_ms));
        else lines.push(marks.length + ' tool calls');
      }
      if (a.error) lines.push(a.error);
      tip.textContent = lines.join('\n');
      tip.hidden = false;
      tip.style.left = Math.min(window.innerWidth - 430, ev.clientX + 12) + 'px';
      tip.style.top = (ev.clientY + 14) + 'px';
    });
    cv.addEventListener('mouseleave', () => { tip.hidden = true; });
    cv.addEventListener('click', (ev) => { const a = timelineHit(ev); if (a) openTranscript(a.id); });
    cv.addEventListener('wheel', (ev) => {
      if (!ev.ctrlKey && !ev.shiftKey) return;
      ev.preventDefault();
      const rect = cv.getBoundingClientRect();
      const fx = Math.min(1, Math.max(0, (ev.clientX - rect.left - TL_LABEL) / (rect.width - TL_LABEL - 8)));
      const visible = 1 / UI.tlZoom;
      if (ev.ctrlKey) {
        const at = UI.tlStart + fx * visible;
        UI.tlZoom = Math.min(2000, Math.max(1, UI.tlZoom * (ev.deltaY < 0 ? 1.25 : 0.8)));
        UI.tlStart = at - fx / UI.tlZoom;
      } else {
        UI.tlStart += (ev.deltaY > 0 ? 0.1 : -0.1) * visible;
      }
      UI.tlStart = Math.min(1 - 1 / UI.tlZoom, Math.max(0, UI.tlStart));
      drawTimeline(Date.now());
    }, { passive: false });
    $('tl-reset').addEventListener('click', () => { UI.tlZoom = 1; UI.tlStart = 0; drawTimeline(Date.now()); });
  }

  function drawUsage() {
    const cv = $('usage-plot');
    const W = Math.max(200, cv.clientWidth || cv.parentNode.clientWidth);
    const H = 150;
    const ctx = fitCanvas(cv, W, H);
    const pts = S.usage;
    const padL = 56;
    const padR = 56;
    const padT = 10;
    const padB = 20;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    if (!pts.length) {
      ctx.fillStyle = cssColors['--muted'];
      ctx.fillText('no usage yet', padL, H / 2);
      setText($('usage-info'), '');
      return;
    }
    const last = pts[pts.length - 1];
    const t0 = pts[0].t_ms;
    let t1 = last.t_ms;
    if (S.session && S.session.state === 'live') t1 = Math.max(t1, Date.now());
    if (t1 <= t0) t1 = t0 + 1000;
    let maxC = 0;
    let maxT = 0;
    for (const p of pts) {
      if (p.cost_usd > maxC) maxC = p.cost_usd;
      const tk = (p.input_tokens || 0) + (p.output_tokens || 0);
      if (tk > maxT) maxT = tk;
    }
    maxC = maxC || 0.01;
    maxT = maxT || 1;
    const pw = W - padL - padR;
    const ph = H - padT - padB;
    const x = (t) => padL + ((t - t0) / (t1 - t0)) * pw;
    const yc = (c) => padT + ph - (c / maxC) * ph;
    const yt = (tk) => padT + ph - (tk / maxT) * ph;
    ctx.strokeStyle = cssColors['--grid'];
    ctx.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = Math.round(padT + (ph * i) / 4) + 0.5;
      ctx.beginPath(); ctx.moveTo(padL, y); ctx.lineTo(W - padR, y); ctx.stroke();
      ctx.fillStyle = cssColors['--plot-cost'];
      ctx.textAlign = 'right';
      ctx.fillText(fmtCost(maxC * (1 - i / 4)), padL - 4, y);
      ctx.fillStyle = cssColors['--plot-tokens'];
      ctx.textAlign = 'left';
      ctx.fillText(fmtTokens(Math.round(maxT * (1 - i / 4))), W - padR + 4, y);
    }
    ctx.fillStyle = cssColors['--muted'];
    for (const t of timeTicks(t0, t1, pw, t0)) ctx.fillText(tickLabel(t, t0), x(t) - 8, H - padB / 2);
    // Step lines: totals hold until the next point; thin out to about one point per pixel.
    const stride = Math.max(1, Math.floor(pts.length / (pw * 2)));
    const line = (color, yOf) => {
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      let prevY = null;
      for (let i = 0; i < pts.length; i += stride) {
        const p = pts[i];
        const px = x(p.t_ms);
        const py = yOf(p);
        if (prevY === null) ctx.moveTo(px, py); else { ctx.lineTo(px, prevY); ctx.lineTo(px, py); }
        prevY = py;
      }
      const lp = yOf(last);
      ctx.lineTo(x(last.t_ms), lp);
      ctx.lineTo(x(t1), lp);
      ctx.stroke();
    };
    line(cssColors['--plot-tokens'], (p) => yt((p.input_tokens || 0) + (p.output_tokens || 0)));
    line(cssColors['--plot-cost'], (p) => yc(p.cost_usd));
    setText($('usage-info'), fmtCost(last.cost_usd) + ' · ' + fmtTokens(last.input_tokens) + ' in · ' + fmtTokens(last.output_tokens) + ' out');
  }

  // ---------------------------------------------------------------- teams
  const teamEls = new Map();

  function renderTeams() {
    const box = $('teams');
    const names = Array.from(S.teams.keys()).sort();
    $('teams-empty').hidden = names.length > 0;
    for (const name of names) {
      let e = teamEls.get(name);
      if (!e) { e = makeTeam(name); teamEls.set(name, e); }
      box.append(e);
      fillTeam(e, S.teams.get(name));
    }
    for (const [name, e] of teamEls) if (!S.teams.has(name)) { e.remove(); teamEls.delete(name); }
  }

  function makeTeam(name) {
    const e = h('section', { class: 'team', 'data-testid': 'team', 'data-team': name });
    e.__members = h('ul', { class: 'members' });
    e.__messages = h('ol', { class: 'messages', 'aria-label': 'Messages', tabindex: '0' });
    // Follow new messages until the reader scrolls up; follow again once back at the bottom.
    e.__messages.__stick = true;
    e.__messages.addEventListener('scroll', () => {
      const l = e.__messages;
      if (l.__filling) return;
      l.__stick = l.scrollTop + l.clientHeight >= l.scrollHeight - 4;
    }, { passive: true });
    e.__board = h('div', { class: 'board' });
    e.__cols = {};
    for (const [status, label] of BOARD) {
      const col = h('div', { class: 'board-column', 'data-testid': 'board-column', 'data-status': status }, h('h4', null, label));
      col.__list = h('div');
      col.append(col.__list);
      e.__cols[status] = col;
      e.__board.append(col);
    }
    const to = h('select', { 'data-testid': 'message-to', 'aria-label': 'Recipient' });
    const text = h('textarea', { 'data-testid': 'message-text', 'aria-label': 'Message', placeholder: 'Message to the teammate', rows: '1' });
    const send = h('button', { type: 'submit', 'data-testid': 'message-send' }, 'Send');
    const result = h('span', { class: 'action-result', 'data-testid': 'action-result', role: 'status' });
    const form = h('form', { class: 'send-form' }, to, text, send);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const member = to.value;
      const body = text.value;
      if (!member || !body.trim()) { result.textContent = 'Choose a member and write a message.'; result.setAttribute('data-ok', 'false'); return; }
      send.disabled = true;
      const r = await postAction('/api/teams/' + enc(name) + '/members/' + enc(member) + '/messages', { text: body, summary: null });
      send.disabled = !S.actions.message_member;
      result.textContent = r.message || (r.ok ? 'sent' : 'failed');
      result.setAttribute('data-ok', r.ok ? 'true' : 'false');
      if (r.ok) text.value = '';
    });
    text.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) form.requestSubmit(); });
    e.__to = to;
    e.__send = send;
    e.__title = h('span');
    e.append(h('h3', null, 'Team ', e.__title),
      h('div', { class: 'team-grid' },
        h('div', null, h('h4', null, 'Members'), e.__members),
        h('div', null, h('h4', null, 'Messages'), e.__messages, form, result)),
      h('h4', null, 'Tasks'), e.__board);
    return e;
  }

  /** A frame's summary as people read it: protocol frames (JSON) show their own words. */
  function messageSummary(text) {
    const s = String(text || '');
    if (s.charAt(0) !== '{') return s;
    const v = parseJson(s);
    if (!v || typeof v !== 'object') return s;
    for (const k of ['summary', 'reason', 'result', 'message', 'content', 'text', 'idleReason']) {
      if (typeof v[k] === 'string' && v[k]) return v[k];
    }
    return s;
  }

  function fillTeam(e, t) {
    setText(e.__title, t.name);
    // members
    e.__members.textContent = '';
    for (const m of t.members || []) {
      const dot = h('span', { class: 'dot' });
      if (m.color && /^(#[0-9a-f]{3,8}|[a-z]{3,20})$/i.test(m.color)) dot.style.background = m.color;
      e.__members.append(h('li', { class: 'member', 'data-testid': 'member', 'data-member': m.name, 'data-status': m.status, title: m.agent_id || '' },
        dot, h('span', { class: 'm-name' }, m.name), h('span', { class: 'm-status' }, m.status),
        h('span', { class: 'm-meta muted' }, [m.agent_type, m.backend].filter(Boolean).join(' · '))));
    }
    // recipient choices, keeping the current one
    const prev = e.__to.value;
    const names = (t.members || []).map((m) => m.name);
    const cur = Array.from(e.__to.options).map((o) => o.value);
    if (cur.join('\n') !== names.join('\n')) {
      e.__to.textContent = '';
      for (const n of names) e.__to.append(h('option', { value: n }, n));
      if (names.includes(prev)) e.__to.value = prev;
    }
    const can = !!S.actions.message_member;
    e.__send.disabled = !can;
    e.__send.title = can ? 'Send (Ctrl+Enter)' : 'Messaging is not available for this session';
    // messages, newest at the bottom; stay at the bottom when the reader is there
    const list = e.__messages;
    const keep = list.scrollTop;
    list.__filling = true;
    list.textContent = '';
    for (const m of t.messages || []) {
      list.append(h('li', { class: 'team-message', 'data-testid': 'team-message', 'data-kind': m.kind, 'data-read': m.read ? 'true' : 'false', title: new Date(m.t_ms).toLocaleString() },
        h('span', { class: 'tm-time' }, fmtTime(m.t_ms)),
        h('span', { class: 'tm-route' }, h('span', { class: 'tm-from' }, m.from), ' → ', h('span', { class: 'tm-to' }, m.to)),
        h('span', { class: 'tm-summary' }, h('span', { class: 'kind', 'data-kind': m.kind }, m.kind.replace(/_/g, ' ')), messageSummary(m.summary))));
    }
    list.scrollTop = list.__stick ? list.scrollHeight : keep;
    list.__filling = false;
    // board
    for (const [status] of BOARD) e.__cols[status].__list.textContent = '';
    for (const task of t.tasks || []) {
      if (task.status === 'deleted') continue;
      const col = e.__cols[task.status] || e.__cols.pending;
      const meta = h('div', { class: 'bt-meta' });
      if (task.owner) meta.append(h('span', null, 'owner ', h('strong', null, task.owner)));
      if (task.blocked_by && task.blocked_by.length) meta.append(h('span', { class: 'bt-blocked' }, 'blocked by ' + task.blocked_by.map((b) => '#' + b).join(', ')));
      if (!e.__cols[task.status]) meta.append(h('span', null, task.status));
      col.__list.append(h('div', { class: 'board-task', 'data-testid': 'board-task', 'data-task-id': task.id },
        h('div', null, h('span', { class: 'bt-id' }, '#' + task.id), task.subject), meta));
    }
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
        h('td', { class: 'path' }, j.id), h('td', null, j.worker || ''), h('td', { class: 'num' }, String(j.attempt)),
        h('td', null, j.state), h('td', { title: j.agent_id || '' }, agentLabel(j.agent_id))));
    }
    $('jobs-empty').hidden = jl.length > 0;
  }

  // ---------------------------------------------------------------- transcript panel
  const TR = { es: null, timer: 0, backoff: 500, next: 0, complete: false, tools: new Map(), gen: 0 };

  function openTranscript(agentId) {
    if (UI.transcriptAgent === agentId && !$('transcript').hidden) return;
    closeTranscript(true);
    UI.transcriptAgent = agentId;
    UI.autoPicked = false; // reading this session: no longer follow newer ones
    const panel = $('transcript');
    panel.setAttribute('data-agent-id', agentId);
    panel.hidden = false;
    $('tr-entries').textContent = '';
    setText($('tr-status'), 'loading…');
    TR.next = 0;
    TR.complete = false;
    TR.tools = new Map();
    TR.backoff = 500;
    const g = ++TR.gen;
    renderTranscriptHead();
    writeHash();
    loadTranscript(g);
    if (UI.tab === 'timeline') drawTimeline(Date.now());
  }

  function closeTranscript(quiet) {
    TR.gen++;
    clearTimeout(TR.timer);
    if (TR.es) { TR.es.close(); TR.es = null; }
    const panel = $('transcript');
    panel.hidden = true;
    panel.removeAttribute('data-agent-id');
    const had = UI.transcriptAgent;
    UI.transcriptAgent = null;
    if (!quiet) {
      writeHash();
      renderRows(Date.now());
      if (had) {
        const row = rowEls.get('a:' + had);
        if (row) $('agent-tree').focus();
      }
    }
  }

  function transcriptBase() {
    return '/api/sessions/' + enc(S.sessionId) + '/agents/' + enc(UI.transcriptAgent) + '/transcript';
  }

  async function loadTranscript(g) {
    try {
      const res = await fetch(apiUrl(transcriptBase(), { after: '0' }));
      if (g !== TR.gen) return;
      if (!res.ok) {
        const body = parseJson(await res.text()) || {};
        throw new Error(body.error || ('HTTP ' + res.status));
      }
      const page = await res.json();
      if (g !== TR.gen) return;
      appendPage(page);
      if (!TR.complete) followTranscript(g);
    } catch (e) {
      if (g !== TR.gen) return;
      setText($('tr-status'), 'no transcript yet: ' + (e && e.message ? e.message : e));
      TR.timer = setTimeout(() => { if (g === TR.gen) loadTranscript(g); }, TR.backoff);
      TR.backoff = Math.min(TR.backoff * 2, 15000);
    }
  }

  function followTranscript(g) {
    const src = new EventSource(apiUrl(transcriptBase() + '/events', { after: String(TR.next) }));
    TR.es = src;
    src.onopen = () => { if (g === TR.gen) { TR.backoff = 500; setText($('tr-status'), 'live'); } };
    src.addEventListener('entries', (ev) => {
      if (g !== TR.gen) return;
      const page = parseJson(ev.data);
      if (!page) return;
      appendPage(page);
      if (TR.complete) { src.close(); if (TR.es === src) TR.es = null; }
    });
    src.onerror = () => {
      if (g !== TR.gen) return;
      src.close();
      if (TR.es === src) TR.es = null;
      if (TR.complete) return;
      setText($('tr-status'), 'reconnecting…');
      TR.timer = setTimeout(() => { if (g === TR.gen) followTranscript(g); }, TR.backoff);
      TR.backoff = Math.min(TR.backoff * 2, 15000);
    };
  }

  function appendPage(page) {
    const box = $('tr-entries');
    const atBottom = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
    const frag = document.createDocumentFragment();
    for (const entry of page.entries || []) {
      const e = renderEntry(entry);
      if (e) frag.append(e);
    }
    box.append(frag);
    if (typeof page.next === 'number' && page.next > TR.next) TR.next = page.next;
    TR.complete = !!page.complete;
    setText($('tr-status'), TR.complete ? 'complete' : 'live');
    if (atBottom) box.scrollTop = box.scrollHeight;
  }

  function textBlock(kind, label, text, t) {
    return h('div', { class: 'entry', 'data-testid': 'entry', 'data-kind': kind },
      h('div', { class: 'who' }, h('span', null, label), t ? h('span', null, fmtTime(t)) : null),
      h('div', { class: 'text' }, text));
  }

  /** A short one-line view of a tool's input: its command, path or pattern when it has one. */
  function toolPreview(input) {
    const v = parseJson(input);
    if (v && typeof v === 'object') {
      for (const k of ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt', 'subject', 'recipient']) {
        if (typeof v[k] === 'string' && v[k]) return v[k].split('\n')[0].slice(0, 200);
      }
    }
    return String(input || '').replace(/\s+/g, ' ').slice(0, 200);
  }

  function diffBlock(lines) {
    const pre = h('pre', { class: 'diff' });
    for (const line of lines) {
      const c = line.charAt(0);
      const cls = line.startsWith('@@') ? 'diff-hunk' : c === '+' ? 'diff-add' : c === '-' ? 'diff-del' : 'diff-ctx';
      pre.append(h('span', { class: cls }, line || ' '));
    }
    return pre;
  }

  function resultBlock(entry) {
    const e = h('div', { class: 'entry' + (entry.is_error ? ' is-error' : ''), 'data-testid': 'entry', 'data-kind': 'tool_result', 'data-tool-use-id': entry.tool_use_id },
      h('div', { class: 'who' }, h('span', null, entry.is_error ? 'error' : 'result')),
      h('pre', null, entry.text));
    if (entry.truncated) e.append(h('div', { class: 'truncated' }, 'cut to 20,000 characters'));
    return e;
  }

  function renderEntry(entry) {
    switch (entry.kind) {
      case 'user': return textBlock('user', 'user', entry.text, entry.t_ms);
      case 'assistant': return textBlock('assistant', 'assistant', entry.text, entry.t_ms);
      case 'thinking': return textBlock('thinking', 'thinking', entry.text, null);
      case 'system': return textBlock('system', 'system', entry.text, null);
      case 'tool_use': {
        const status = h('span', { class: 'tool-status', 'data-status': 'pending' }, '…');
        const d = h('details', { class: 'entry', 'data-testid': 'entry', 'data-kind': 'tool_use', 'data-tool-use-id': entry.id },
          h('summary', null, h('span', { class: 'tool-name' }, entry.name), h('span', { class: 'tool-preview' }, toolPreview(entry.input)), status));
        if (entry.diff && entry.diff.length) d.append(diffBlock(entry.diff));
        d.append(h('pre', { class: 'tool-input' }, entry.input));
        TR.tools.set(entry.id, { d, status });
        return d;
      }
      case 'tool_result': {
        const r = resultBlock(entry);
        const t = TR.tools.get(entry.tool_use_id);
        if (t) {
          t.d.append(r);
          if (entry.is_error) t.d.classList.add('has-error');
          t.status.textContent = entry.is_error ? 'error' : 'ok';
          t.status.setAttribute('data-status', entry.is_error ? 'error' : 'ok');
          return null;
        }
        return r;
      }
      default: return textBlock('system', String(entry.kind || 'entry'), String(entry.text || ''), null);
    }
  }

  function renderTranscriptHead() {
    const a = S.agents.get(UI.transcriptAgent);
    if (!a) { setText($('tr-title'), UI.transcriptAgent || ''); return; }
    setText($('tr-title'), (a.team_member || a.agent_type) + (a.description ? ' · ' + a.description : ''));
    const st = $('tr-state');
    setAttr(st, 'data-state', a.state);
    setText(st, stateText(a) + ' · ' + (a.turns || 0) + ' turns · ' + fmtTokens(agentTokens(a)) + ' tokens · ' + fmtCost(a.cost_usd) + (a.error ? ' · ' + a.error : ''));
  }

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
    loadSessions();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
