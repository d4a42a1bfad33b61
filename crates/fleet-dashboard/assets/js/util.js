// fleet dashboard page. Plain JS: no framework, no build step, no external resources.
// Every string from the server (models, repositories, team files) is inserted as text
// (createElement + textContent), never parsed as HTML.
// The JSON shapes are those of crates/fleet-dashboard/src/api.rs.
//
// The page is these files, inlined by crates/fleet-dashboard/src/server/page.rs in the order
// of its `JS` list into one strict-mode function, so they share one scope: a file's top-level
// statements may use what earlier files declare; its functions may use anything, since they
// run once the last file (main.js) has booted the page.
//
// util.js: constants, DOM and formatting helpers, the toast, POSTing actions.

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
