// net.js: opening a session, its snapshot, and its event stream with reconnect and backoff.

// ---------------------------------------------------------------- opening a session
let gen = 0;               // bumps when the open session changes; stale callbacks check it
let es = null;
let esTimer = 0;
let backoff = 500;

async function openSession(id, byUser) {
  if (id === S.sessionId && S.session) return;
  gen++;
  closeStream();
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
  // Its `sessions` events are left to the list's own stream (sessions.js).
  src.onerror = () => {
    if (g !== gen) return;
    src.close();
    if (es === src) es = null;
    setConnection('closed');
    esTimer = setTimeout(() => { if (g === gen) openStream(g); }, backoff);
    backoff = Math.min(backoff * 2, 15000);
  };
}
