// teams.js: teams with their members, messages, task board and the send form.

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
