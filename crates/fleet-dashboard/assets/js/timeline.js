// timeline.js: the timeline canvas (a bar per agent, tool marks, zoom and pan) and the
// cost and tokens plot.

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
