#!/usr/bin/env node
// Opens the coordinator's dashboard in headless Chromium (Debian's, through playwright-core: no
// browser is downloaded) while a job trains, and checks what a person watching it would see:
//   1. the page loads without errors (nor Content-Security-Policy violations) and draws its charts;
//   2. the curves grow while the job trains (more points, a later newest point);
//   3. at the end the page shows the final result, the same numbers as /api/status's result;
//   4. a screenshot of the finished job's page (for the docs).
//
//   node dashboard_test.js URL SCREENSHOT.png
// Exit status: 0 passed, 1 failed, 77 the browser cannot start (the caller decides if that skips).
"use strict";
const { chromium } = require("playwright-core");

const [url, screenshot] = process.argv.slice(2);
const executablePath = process.env.SS_CHROMIUM || "/usr/bin/chromium";
const deadline = Date.now() + Number(process.env.SS_BROWSER_TEST_SECONDS || 45) * 1000;

function fail(message) {
  console.error("dashboard_test: FAILED: " + message);
  process.exit(1);
}

// Polls `probe` (run in the page) until `accept` holds for its value, or the deadline.
async function waitFor(page, what, probe, accept) {
  let last;
  while (Date.now() < deadline) {
    last = await page.evaluate(probe);
    if (accept(last)) return last;
    await page.waitForTimeout(200);
  }
  fail("timed out waiting for " + what + "; last seen: " + JSON.stringify(last));
}

// What the page shows: each chart's lines and points, the state, the result fields.
function pageView() {
  const charts = {};
  for (const fig of document.querySelectorAll("figure.chart")) {
    const paths = fig.querySelectorAll("path.line");
    let newest = -1;
    for (const p of paths) {
      const last = p.getAttribute("d").split("L").pop().split(" ");
      newest = Math.max(newest, Number(last[0].replace("M", "")));
    }
    charts[fig.dataset.chart] = { lines: paths.length, points: Number(fig.dataset.points || 0), newestX: newest };
  }
  const result = {};
  for (const dd of document.querySelectorAll("#result-fields dd")) result[dd.dataset.field] = dd.textContent;
  return {
    state: document.body.dataset.state || "",
    resultShown: !document.getElementById("result").hidden,
    result,
    charts,
    members: document.querySelectorAll("#members tbody tr").length,
    examples: document.getElementById("sum-examples").textContent,
  };
}

async function launch() {
  try {
    return await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  } catch (e) {
    console.error("dashboard_test: Chromium (" + executablePath + ") does not start here: " + e.message.split("\n")[0]);
    process.exit(77);
  }
}

async function checkLive(page) {
  const first = await waitFor(page, "charts with at least 2 points while the job trains", pageView,
    (v) => v.charts.throughput && v.charts.throughput.points >= 2 && v.charts.ne && v.charts.ne.points >= 2);
  if (first.state === "done" || first.state === "failed") fail("the job ended before the page saw it train; give it more rows");
  for (const id of ["throughput", "ne", "progressive", "logloss", "committed", "sync_gap", "sync_bytes", "shard_rows", "shard_lookups", "members"])
    if (!first.charts[id] || first.charts[id].lines < 1) fail("chart '" + id + "' draws no line: " + JSON.stringify(first.charts));
  if (first.members < 4) fail("the members table lists " + first.members + " members");
  console.log("dashboard_test: live: state " + first.state + ", " + first.charts.throughput.points + " throughput points");
  const later = await waitFor(page, "the curves to grow", pageView,
    (v) => v.charts.throughput.points > first.charts.throughput.points && v.charts.committed.newestX >= first.charts.committed.newestX);
  console.log("dashboard_test: updated: " + later.charts.throughput.points + " throughput points, state " + later.state);
}

async function checkFinal(page) {
  const final = await waitFor(page, "the final result", pageView, (v) => v.state === "done" && v.resultShown);
  const status = await page.evaluate(async () => (await fetch("/api/status")).json());
  const result = JSON.parse(status.service.result);
  if (!result.ok) fail("the job failed: " + result.error);
  const shown = (field) => Number(final.result[field]);
  for (const field of ["test_ne", "train_ne", "examples"]) {
    const want = result[field];
    if (!(Math.abs(shown(field) - want) <= 1e-5 * Math.max(1, Math.abs(want))))
      fail("the page shows " + field + " " + final.result[field] + ", the result says " + want);
  }
  // The 64-bit job id exactly as the status writes it (a JavaScript number would round it).
  const statusText = await page.evaluate(async () => (await fetch("/api/status")).text());
  const jobId = /"job_id":(\d+)/.exec(statusText)[1];
  const shownId = await page.evaluate(() => document.getElementById("job-id").textContent);
  if (shownId !== "job " + jobId) fail("the page shows '" + shownId + "', the status's job id is " + jobId);
  if (final.charts.ne.lines < 2) fail("no validation curve next to the training NE: " + JSON.stringify(final.charts.ne));
  console.log("dashboard_test: final: test NE " + final.result.test_ne + ", train NE " + final.result.train_ne +
              ", " + final.result.examples + " examples; " + final.charts.throughput.points + " throughput points");
}

async function main() {
  const browser = await launch();
  const errors = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(url + "?refresh=250");
    await checkLive(page);
    await checkFinal(page);
    if (errors.length) fail("the page logged errors: " + errors.join(" | "));
    await page.waitForTimeout(300);
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log("dashboard_test: passed; screenshot " + screenshot);
  } finally {
    await browser.close();
  }
}

main().catch((e) => fail(e.stack || String(e)));
