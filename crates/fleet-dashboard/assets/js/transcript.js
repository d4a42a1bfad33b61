// transcript.js: an agent's transcript panel, paged then followed live; tool calls folded
// with their results, diffs coloured.

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
