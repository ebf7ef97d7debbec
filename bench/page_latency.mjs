// page_latency.mjs - how long the page of `collsim serve` takes to show a
// small run's figures (issue 32): headless chromium (puppeteer-core, from
// tests/browser/node_modules) submits small requests through the form and
// times, from the click on Run:
//   done     the status says "done" (the job seen finished by the polls)
//   table    the result table is filled
//   heatmap  the heatmap <img> shows this job's picture (decoded)
//   plot     the plot <img> shows (compare and sweep)
// and, apart from the page, each figure's HTTP request for a done job
// (GET heatmap.png, heatmap.svg, plot.svg: the server's drawing plus the
// transfer, from node's fetch).  Each figure is the median of --rounds
// (default 7) fresh jobs (a new size each round: no cache answers).
// Prints a table and one summary line:
//   page latency: heatmap shown N ms after the click (median, run on
//   loggp:p=8), server heatmap.png P ms, heatmap.svg S ms
// Run by `tools/bench page` (which installs, builds and starts the server):
//   node bench/page_latency.mjs --url http://127.0.0.1:PORT [--chromium PATH] [--rounds N]

import { createRequire } from "node:module";

const require = createRequire(new URL("../tests/browser/package.json", import.meta.url));
const puppeteer = (await import(require.resolve("puppeteer-core"))).default;

const args = { url: "", chromium: "/usr/bin/chromium", rounds: "7" };
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i].replace(/^--/, "");
  if (!(k in args) || i + 1 >= process.argv.length) {
    console.error(`page_latency: unknown or incomplete option '${process.argv[i]}'`);
    process.exit(2);
  }
  args[k] = process.argv[++i];
}
if (!args.url) {
  console.error("usage: node bench/page_latency.mjs --url URL [--chromium PATH] [--rounds N]");
  process.exit(2);
}
const ROUNDS = Math.max(1, Number(args.rounds) | 0);
const TIMEOUT = 20000;

// Small requests (each simulates in a few ms); the size varies by round.
const CASES = [
  { name: "run loggp:p=8", kind: "run", machines: "loggp:p=8", bytes: (r) => 65536 + 64 * r },
  { name: "run alphabeta 4x4 torus", kind: "run", machines: "alphabeta:topo=torus,rows=4,cols=4",
    bytes: (r) => 65536 + 64 * r },
  { name: "compare of 2", kind: "compare", machines: "loggp:p=8\nalphabeta:topo=ring,p=8",
    bytes: (r) => 65536 + 64 * r },
];

function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? s[(s.length - 1) >> 1] : NaN;
}

async function once(page, c, round) {
  await page.select("#kind", c.kind);
  await page.$eval("#machines", (t, v) => { t.value = v; }, c.machines);
  await page.$eval("#bytes", (e, v) => { e.value = v; }, String(c.bytes(round)));
  const t0 = await page.evaluate(() => performance.now());
  await page.click("#submit");
  // each event stamps itself with performance.now() in the page
  return page.evaluate(async (t0, wantPlot, timeout) => {
    const $ = (id) => document.getElementById(id);
    const out = {};
    const end = performance.now() + timeout;
    while (performance.now() < end) {
      const now = performance.now();
      if (out.done == null && $("status").dataset.state === "done") out.done = now - t0;
      const job = $("results").dataset.job;
      if (out.table == null && job && $("result-table").tBodies[0].rows.length) out.table = now - t0;
      const h = $("heatmap");
      if (out.heatmap == null && job && h.dataset.src && h.dataset.src.includes(job) && h.complete &&
          h.naturalWidth > 0) out.heatmap = now - t0;
      const p = $("plot");
      const plotSrc = p.dataset.src || p.getAttribute("src") || "";
      if (wantPlot && out.plot == null && job && plotSrc.includes(job) && p.complete && p.naturalWidth > 0)
        out.plot = now - t0;
      if (out.heatmap != null && (!wantPlot || out.plot != null)) return out;
      if (["failed", "cancelled"].includes($("status").dataset.state)) return { error: $("status").textContent };
      await new Promise((r) => requestAnimationFrame(r));
    }
    return { error: "no figure within the time limit" };
  }, t0, c.kind !== "run", TIMEOUT);
}

// The figure requests of a done job, from node: server drawing + transfer.
async function figureTimes(url, round) {
  const post = await fetch(url + "/api/compare", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ machines: ["loggp:p=8", "alphabeta:topo=torus,rows=4,cols=4"],
                           coll: "allreduce", algo: "ring", bytes: 1000 + round }) });
  const id = (await post.json()).id;
  for (;;) {
    const j = await (await fetch(`${url}/api/jobs/${id}`)).json();
    if (j.state === "done") break;
    if (j.state !== "queued" && j.state !== "running") throw new Error("job " + j.state);
    await new Promise((r) => setTimeout(r, 2));
  }
  const t = {};
  for (const [k, path] of [["png", "heatmap.png?run=1"], ["svg", "heatmap.svg?run=1"], ["plot", "plot.svg"]]) {
    const t0 = performance.now();
    const res = await fetch(`${url}/api/jobs/${id}/${path}`);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    t[k] = performance.now() - t0;
  }
  return t;
}

const browser = await puppeteer.launch({
  executablePath: args.chromium, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
});
let summary = null;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 900 });
  await page.goto(args.url + "/", { waitUntil: "load", timeout: TIMEOUT });
  await page.waitForFunction(() => document.querySelectorAll("#algo option").length > 0, { timeout: TIMEOUT });
  // one warm-up job: the server's first figure initialises fontconfig
  await once(page, CASES[0], -1);
  console.log("after the click on Run, median of " + ROUNDS + " jobs (ms):");
  console.log("  " + "request".padEnd(26) + "done".padStart(8) + "table".padStart(8) +
              "heatmap".padStart(9) + "plot".padStart(8));
  for (const c of CASES) {
    const got = { done: [], table: [], heatmap: [], plot: [] };
    for (let r = 0; r < ROUNDS; r++) {
      const o = await once(page, c, r);
      if (o.error) throw new Error(`${c.name}: ${o.error}`);
      for (const k of Object.keys(got)) if (o[k] != null) got[k].push(o[k]);
    }
    const f = (k) => (got[k].length ? median(got[k]).toFixed(0) : "-").padStart(k === "heatmap" ? 9 : 8);
    console.log("  " + c.name.padEnd(26) + f("done") + f("table") + f("heatmap") + f("plot"));
    if (!summary) summary = { name: c.name, heatmap: median(got.heatmap) };
  }
  const figs = { png: [], svg: [], plot: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const t = await figureTimes(args.url, r);
    for (const k of Object.keys(figs)) figs[k].push(t[k]);
  }
  console.log("one figure request of a done job, median of " + ROUNDS + " (ms): heatmap.png " +
    median(figs.png).toFixed(1) + ", heatmap.svg " + median(figs.svg).toFixed(1) + ", plot.svg " +
    median(figs.plot).toFixed(1) + " (4x4 torus, allreduce/ring)");
  console.log(`page latency: heatmap shown ${summary.heatmap.toFixed(0)} ms after the click (median, ` +
    `${summary.name}), server heatmap.png ${median(figs.png).toFixed(0)} ms, heatmap.svg ` +
    `${median(figs.svg).toFixed(0)} ms`);
} finally {
  await browser.close();
}
