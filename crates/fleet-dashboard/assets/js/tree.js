// tree.js: the agent tree, virtualised (only visible rows in the DOM), its filter,
// grouping by type with drill-down, keyboard moves, and stopping a task.

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
