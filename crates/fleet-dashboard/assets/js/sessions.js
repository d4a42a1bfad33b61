// sessions.js: the sessions list, fed by the /api/sessions/events stream; it opens the
// most recent live session (else the newest) when the person has not picked one.

// ---------------------------------------------------------------- sessions list
const sessionEls = new Map();
const LS = { es: null, timer: 0, backoff: 500, heard: false };

/**
 * The list's own event stream: `sessions` with the whole list when it opens and whenever it
 * changes, whether or not a session is open. Reopened with backoff when it drops.
 */
function openSessionsStream() {
  clearTimeout(LS.timer);
  if (LS.es) { LS.es.close(); LS.es = null; }
  const src = new EventSource(apiUrl('/api/sessions/events'));
  LS.es = src;
  src.onopen = () => { LS.backoff = 500; };
  src.addEventListener('sessions', (ev) => {
    const list = parseJson(ev.data);
    if (!Array.isArray(list)) return;
    if (!LS.heard) { LS.heard = true; showMainError(null); }
    setSessions(list);
  });
  src.onerror = () => {
    src.close();
    if (LS.es === src) LS.es = null;
    if (!LS.heard) showMainError('Cannot list sessions: the event stream of /api/sessions/events failed; retrying');
    LS.timer = setTimeout(openSessionsStream, LS.backoff);
    LS.backoff = Math.min(LS.backoff * 2, 15000);
  };
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
