// state.js: the model of the open session (S, UI, dirty), the remembered selection in the
// URL hash, and merging snapshots and batches into the model (queued, one flush per frame).

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
