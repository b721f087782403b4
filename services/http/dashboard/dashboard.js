// The coordinator's dashboard: polls /api/status and /api/history (only the points it has not
// seen) and draws the job's curves as SVG. No library, no other origin; text from the job goes in
// through textContent only. ?refresh=MS sets the poll interval (default 1000).
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const MAX_POINTS = 2048;  // per series in the page; thinned like the coordinator's history
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777",
                "#4b5563", "#65a30d"];

// Each chart: the series it draws, by name or by a pattern over the members' series.
const CHARTS = [
  { id: "throughput", title: "Throughput (examples/s)", series: [["job/examples_per_sec", "job"]] },
  { id: "ne", title: "Normalized entropy", series: [["job/progressive_ne", "progressive (window)"], ["job/validation_ne", "validation"]] },
  { id: "progressive", title: "Progressive AUC and calibration (window)",
    series: [["job/progressive_auc", "AUC"], ["job/progressive_calibration", "calibration"]] },
  { id: "logloss", title: "Log loss", series: [["job/progressive_logloss", "progressive (window)"], ["job/train_logloss", "train (all)"],
                                               ["job/validation_logloss", "validation"]] },
  { id: "committed", title: "Examples committed", series: [["job/examples_committed", "committed"]] },
  { id: "sync_gap", title: "Sync gap per trainer (batches between syncs)", pattern: /^trainer\/(.+)\/sync_gap$/ },
  { id: "sync_latency", title: "Sync round latency p50 per trainer (ms)", pattern: /^trainer\/(.+)\/sync_latency_p50_ms$/ },
  { id: "sync_distance", title: "Replica distance from the center per trainer", pattern: /^trainer\/(.+)\/sync_distance$/ },
  { id: "sync_bytes", title: "Sync traffic per trainer (bytes/s, sent and received)", pattern: /^trainer\/(.+)\/sync_bytes_per_sec$/ },
  { id: "trainer_eps", title: "Examples/s per trainer", pattern: /^trainer\/(.+)\/examples_per_sec$/ },
  { id: "shard_rows", title: "Embedding rows per shard", pattern: /^shard\/(.+)\/rows$/ },
  { id: "shard_lookups", title: "Rows looked up per second per shard", pattern: /^shard\/(.+)\/examples_per_sec$/ },
  { id: "shard_hit_rate", title: "Hit rate per shard", pattern: /^shard\/(.+)\/hit_rate$/, optional: true },
  { id: "snapshot_age", title: "Age of the newest snapshot (s)", series: [["job/seconds_since_snapshot", "age"]] },
  { id: "members", title: "Members (and late ones)", series: [["job/members", "members"], ["job/members_late", "late"]] },
];

// The coordinator's status field each summary card shows. Its help, from /api/fields (the
// coordinator's status table, where every field is declared), is the card's tooltip.
const CARD_FIELDS = {
  "sum-examples": "examples", "sum-eps": "examples_per_sec", "sum-progress": "progress", "sum-ne": "progressive_ne",
  "sum-members": "members", "sum-snapshots": "snapshots",
};

const page = {
  series: new Map(),  // name -> [[t, v], ...]
  lastStatus: null,
  jobId: "",
  failures: 0,
  refreshMs: 1000,
};

function $(id) { return document.getElementById(id); }

function fmt(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return "–";
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(2) + "G";
  if (a >= 1e6) return (v / 1e6).toFixed(2) + "M";
  if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toPrecision(digits || 4)));  // 0.05, not 0.05000
}

function fmtSeconds(s) {
  if (s === null || s === undefined || Number.isNaN(s) || s < 0) return "–";
  if (s < 120) return s.toFixed(0) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  return (s / 3600).toFixed(1) + " h";
}

function setText(id, text) { $(id).textContent = text; }

// ---- data ----

async function fetchText(path) {
  const r = await fetch(path, { cache: "no-store" });
  const text = await r.text();
  if (!r.ok) {
    let why = r.status + " " + r.statusText;
    try { why = JSON.parse(text).error || why; } catch (e) { /* not JSON */ }
    throw new Error(why);
  }
  return text;
}

async function fetchJson(path) { return JSON.parse(await fetchText(path)); }

// The status, and its job id as written: a 64-bit id loses digits as a JavaScript number.
async function fetchStatus() {
  const text = await fetchText("/api/status");
  const id = /"job_id":(\d+)/.exec(text);
  if (id) page.jobId = id[1];
  return JSON.parse(text);
}

function lastTime() {
  let t = -1;
  for (const pts of page.series.values()) if (pts.length) t = Math.max(t, pts[pts.length - 1][0]);
  return t;
}

function thin(points) {
  const kept = [];
  for (let i = points.length - 1; i >= 0; i -= 2) kept.push(points[i]);
  return kept.reverse();
}

function mergeHistory(history) {
  for (const [name, points] of Object.entries(history.series || {})) {
    let pts = page.series.get(name);
    if (!pts) { pts = []; page.series.set(name, pts); }
    const last = pts.length ? pts[pts.length - 1][0] : -Infinity;
    for (const p of points) if (p[0] > last) pts.push(p);
    if (pts.length > MAX_POINTS) page.series.set(name, thin(pts));
  }
}

async function loadFieldHelp() {
  try {
    const fields = await fetchJson("/api/fields");
    const help = new Map((fields.service || []).map((f) => [f.name, f.help]));
    for (const [id, name] of Object.entries(CARD_FIELDS)) {
      const text = help.get(name);
      if (text) $(id).closest(".card").title = text;
    }
  } catch (e) { /* the cards work without their help */ }
}

async function refresh() {
  try {
    const [status, history] = await Promise.all([fetchStatus(), fetchJson("/api/history?since=" + lastTime())]);
    mergeHistory(history);
    page.lastStatus = status;
    page.failures = 0;
    render(status, null);
  } catch (e) {
    page.failures += 1;
    render(page.lastStatus, e.message || String(e));
  }
  const ended = page.lastStatus && isEnded(page.lastStatus.service);
  // After the end, or while the coordinator is away, ask less often.
  setTimeout(refresh, page.failures > 0 || ended ? Math.max(page.refreshMs, 5000) : page.refreshMs);
}

function isEnded(s) { return s && (s.state === "done" || s.state === "failed"); }

// ---- rendering ----

function render(status, error) {
  const s = status ? status.service || {} : null;
  renderHeader(s, error);
  if (s) {
    renderSummary(s);
    renderResult(s);
    renderMembers(s.members || []);
  }
  renderCharts();
  document.body.dataset.updated = String(Date.now());
  document.body.dataset.state = s ? s.state || "" : "";
}

function renderHeader(s, error) {
  const state = $("job-state");
  state.textContent = s ? s.state : "connecting";
  state.className = "state " + (s ? s.state : "");
  if (page.jobId) setText("job-id", "job " + page.jobId);
  const banner = $("banner");
  if (error) {
    setText("connection", "no answer: " + error);
    banner.hidden = false;
    banner.className = "banner";
    banner.textContent = s
      ? "The coordinator does not answer (" + error + "): the job has ended and it exited, or it stopped. " +
        "This is its last state, as of " + new Date().toLocaleTimeString() + "."
      : "The coordinator does not answer yet (" + error + ").";
  } else {
    setText("connection", "updated " + new Date().toLocaleTimeString());
    banner.hidden = !(s && s.state === "failed");
    banner.className = "banner failed";
    if (s && s.state === "failed") banner.textContent = "The job failed: " + (s.error || "see the coordinator's log");
  }
}

function renderSummary(s) {
  setText("sum-examples", fmt(s.examples));
  setText("sum-committed", fmt(s.examples_committed) + " committed");
  const eps = page.series.get("job/examples_per_sec");
  setText("sum-eps", eps && eps.length ? fmt(eps[eps.length - 1][1]) : fmt(s.examples_per_sec));
  setText("sum-trainers", s.trainers + " trainer" + (s.trainers === 1 ? "" : "s"));
  setText("sum-progress", s.progress === null || s.progress === undefined ? "–" : (100 * s.progress).toFixed(1) + "%");
  setText("sum-eta", isEnded(s) ? "ended" : s.eta_seconds ? "ETA " + fmtSeconds(s.eta_seconds) : "");
  setText("sum-ne", s.progressive_enough === false ? "too few" : fmt(s.progressive_ne, 5));
  setText("sum-validation", s.validation_ne === null || s.validation_ne === undefined ? "" : "validation " + fmt(s.validation_ne, 5));
  const members = s.members || [];
  setText("sum-members", String(members.length));
  const late = members.filter((m) => m.health !== "ok");
  setText("sum-health", late.length ? late.length + " not ok: " + late.map((m) => m.name + " " + m.health).join(", ") : "all ok");
  setText("sum-snapshots", fmt(s.snapshots) + (s.snapshots_failed ? " (" + s.snapshots_failed + " failed)" : ""));
  setText("sum-snapshot-age", s.seconds_since_snapshot >= 0 ? "newest " + fmtSeconds(s.seconds_since_snapshot) + " old" : "none yet");
}

const RESULT_FIELDS = [
  ["ok", "ok"], ["error", "error"], ["examples", "examples"], ["examples_committed", "committed"],
  ["seconds", "seconds"], ["examples_per_sec", "examples/s"], ["train_ne", "train NE"], ["train_logloss", "train log loss"],
  ["progressive_ne", "progressive NE"], ["progressive_auc", "progressive AUC"], ["progressive_calibration", "progressive calibration"],
  ["test_ne", "test NE"], ["test_logloss", "test log loss"], ["test_auc", "test AUC"], ["test_calibration", "test calibration"],
  ["validation_ne", "validation NE"], ["sync", "sync"], ["sync_gap", "sync gap (mean)"],
  ["sync_latency_p50_ms", "sync p50 ms (mean)"], ["sync_distance", "sync distance (mean)"],
  ["sync_quantize", "sync quantized"], ["sync_bytes", "sync bytes"], ["snapshots", "snapshots"],
  ["export_path", "exported to"],
];

function renderResult(s) {
  const section = $("result");
  if (!s.result) { section.hidden = true; return; }
  let r;
  try { r = JSON.parse(s.result); } catch (e) { return; }
  section.hidden = false;
  section.className = "result" + (r.ok ? "" : " failed");
  const dl = $("result-fields");
  dl.replaceChildren();
  for (const [key, label] of RESULT_FIELDS) {
    const v = r[key];
    if (v === undefined || v === null || v === "" || (key === "error" && r.ok)) continue;
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.dataset.field = key;
    // Whole numbers in full, others to 6 digits: the numbers of the result line, not rounded to k/M.
    dd.textContent = typeof v === "number" && !Number.isInteger(v) ? v.toPrecision(6) : String(v);
    dl.append(dt, dd);
  }
}

function cell(text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function renderMembers(members) {
  const body = $("members").tBodies[0];
  body.replaceChildren();
  const order = { coordinator: 0, shard: 1, sync: 2, reader: 3, trainer: 4 };
  const sorted = members.slice().sort((a, b) => (order[a.role] ?? 9) - (order[b.role] ?? 9) || a.name.localeCompare(b.name));
  for (const m of sorted) {
    const tr = document.createElement("tr");
    tr.append(cell(m.name), cell(m.role), cell(m.health, "health-" + m.health), cell(fmtSeconds(m.seconds_since_heartbeat) + " ago"),
              cell(fmt(m.examples)), cell(m.role === "trainer" ? fmt(m.sync_gap) : ""),
              cell(m.role === "trainer" ? fmt(m.sync_latency_p50_ms) : ""), cell(m.role === "trainer" ? fmt(m.sync_distance) : ""),
              cell(m.role === "shard" ? fmt(m.rows) : ""), cell(m.finished ? "yes" : ""));
    body.append(tr);
  }
}

// The [label, points] pairs a chart draws now.
function chartLines(chart) {
  const lines = [];
  if (chart.series) {
    for (const [name, label] of chart.series) {
      const pts = page.series.get(name);
      if (pts && pts.length) lines.push([label, pts]);
    }
  } else {
    for (const [name, pts] of page.series) {
      const m = chart.pattern.exec(name);
      if (m && pts.length) lines.push([m[1], pts]);
    }
    lines.sort((a, b) => a[0].localeCompare(b[0], undefined, { numeric: true }));
  }
  return lines;
}

function renderCharts() {
  const container = $("charts");
  for (const chart of CHARTS) {
    const lines = chartLines(chart);
    let fig = container.querySelector('figure[data-chart="' + chart.id + '"]');
    if (!lines.length && chart.optional) { if (fig) fig.remove(); continue; }
    if (!fig) fig = makeFigure(container, chart);
    drawChart(fig, lines);
  }
}

function makeFigure(container, chart) {
  const fig = document.createElement("figure");
  fig.className = "chart";
  fig.dataset.chart = chart.id;
  const cap = document.createElement("figcaption");
  cap.textContent = chart.title;
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 600 220");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", chart.title);
  const legend = document.createElement("div");
  legend.className = "legend";
  fig.append(cap, svg, legend);
  container.append(fig);
  return fig;
}

function svgEl(name, attrs, text) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// Round axis steps: 1, 2 or 5 times a power of ten.
function niceStep(range, ticks) {
  const raw = range / ticks;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const n = raw / mag;
  return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
}

function bounds(lines) {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const [, pts] of lines) {
    for (const [t, v] of pts) {
      x0 = Math.min(x0, t); x1 = Math.max(x1, t); y0 = Math.min(y0, v); y1 = Math.max(y1, v);
    }
  }
  if (y0 > 0 && y0 < 0.5 * y1) y0 = 0;  // counters and rates read better from zero
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) { y1 = y0 + (Math.abs(y0) || 1) * 0.1; y0 -= (Math.abs(y0) || 1) * 0.1; }
  return { x0, x1, y0, y1 };
}

function drawAxes(svg, b, box) {
  const sx = (t) => box.left + (t - b.x0) / (b.x1 - b.x0) * box.width;
  const sy = (v) => box.top + box.height - (v - b.y0) / (b.y1 - b.y0) * box.height;
  const yStep = niceStep(b.y1 - b.y0, 4);
  for (let v = Math.ceil(b.y0 / yStep) * yStep; v <= b.y1 + 1e-9 * yStep; v += yStep) {
    svg.append(svgEl("line", { class: "grid", x1: box.left, x2: box.left + box.width, y1: sy(v), y2: sy(v) }));
    svg.append(svgEl("text", { class: "tick", x: box.left - 4, y: sy(v) + 3, "text-anchor": "end" }, fmt(Number(v.toPrecision(6)))));
  }
  const xStep = niceStep(b.x1 - b.x0, 6);
  for (let t = Math.ceil(b.x0 / xStep) * xStep; t <= b.x1 + 1e-9 * xStep; t += xStep) {
    svg.append(svgEl("text", { class: "tick", x: sx(t), y: box.top + box.height + 14, "text-anchor": "middle" }, fmtSeconds(t)));
  }
  svg.append(svgEl("line", { class: "axis", x1: box.left, x2: box.left, y1: box.top, y2: box.top + box.height }));
  svg.append(svgEl("line", { class: "axis", x1: box.left, x2: box.left + box.width, y1: box.top + box.height, y2: box.top + box.height }));
  return { sx, sy };
}

function drawChart(fig, lines) {
  const svg = fig.querySelector("svg");
  const legend = fig.querySelector(".legend");
  svg.replaceChildren();
  legend.replaceChildren();
  let points = 0;
  if (!lines.length) {
    svg.append(svgEl("text", { class: "empty", x: 300, y: 110, "text-anchor": "middle" }, "no data yet"));
  } else {
    const box = { left: 56, top: 8, width: 530, height: 182 };
    const { sx, sy } = drawAxes(svg, bounds(lines), box);
    lines.forEach(([label, pts], i) => {
      const color = COLORS[i % COLORS.length];
      const d = pts.map(([t, v], k) => (k ? "L" : "M") + sx(t).toFixed(1) + " " + sy(v).toFixed(1)).join("");
      svg.append(svgEl("path", { class: "line", d, stroke: color, "data-series": label, "data-points": pts.length }));
      points += pts.length;
      if (i < 16) {
        const item = document.createElement("span");
        const sw = document.createElement("span");
        sw.className = "swatch";
        sw.style.background = color;
        item.append(sw, label + " " + fmt(pts[pts.length - 1][1]));
        legend.append(item);
      }
    });
    if (lines.length > 16) legend.append("… and " + (lines.length - 16) + " more");
  }
  fig.dataset.lines = String(lines.length);
  fig.dataset.points = String(points);
}

function start() {
  const refreshParam = Number(new URLSearchParams(location.search).get("refresh"));
  if (refreshParam >= 100) page.refreshMs = refreshParam;
  loadFieldHelp();
  refresh();
}

document.addEventListener("DOMContentLoaded", start);
