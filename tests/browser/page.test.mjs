// page.test.mjs - the page of `collsim serve` in a real browser (issue 21).
//
// Headless Debian chromium, driven by puppeteer-core, loads the page of a
// running server, asks for a comparison of allreduce/ring on two machines,
// waits for the result and checks:
//   - every table cell against the command line's own answer for the same
//     request (`collsim compare --csv - --no-timing`: algbw, busbw, busiest link
//     and its utilisation are computed by the CLI; `collsim run --json` per
//     machine for the ticks, seconds and events): the page derives what it
//     shows from the result JSON, the CLI is the reference;
//   - the heatmap rendered: naturalWidth/Height > 0 and equal to the size the
//     PNG (fetched again from the same URL) declares in its IHDR chunk;
//   - the window slider re-requests the heatmap with window=T0:T1;
//   - the page's URL, opened in a fresh tab, reproduces the request (same form,
//     same table);
//   - the heatmap's format "auto" asks for SVG on these small machines;
//   - a job queued behind another shows its place in the queue and what it
//     waits behind (the job's "queue", docs/api.md);
//   - a running job shows its progress, and Cancel stops it;
//   - a bad size is refused with the server's message next to the bytes field;
//   - a job failing on its root shows the message next to the root field;
//   - a network file chosen with the file input (an edge list written to a
//     temporary file, its name with a space) is sent inline in the request's
//     "files" under a safe name, the machine becomes net:file=NAME, and the
//     run's ticks are those of `collsim run --machine net:file=PATH`;
//   - every POST the page makes says Content-Type: application/json (the
//     server refuses others, docs/security.md).
// Run by tools/test-browser, which starts the server:
//   node page.test.mjs --url http://127.0.0.1:PORT --collsim build/collsim
//        [--chromium /usr/bin/chromium] [--screenshot FILE]
// Exits 0 when every check passed, 1 with a message naming the failed check.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

const args = { chromium: "/usr/bin/chromium", url: "", collsim: "", screenshot: "" };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const k = a.replace(/^--/, "");
  if (!(k in args) || i + 1 >= process.argv.length) {
    console.error(`page.test: unknown or incomplete option '${a}'`);
    process.exit(2);
  }
  args[k] = process.argv[++i];
}
if (!args.url || !args.collsim) {
  console.error("usage: node page.test.mjs --url URL --collsim PATH [--chromium PATH] [--screenshot FILE]");
  process.exit(2);
}

// The request under test: small enough to run in milliseconds.
const MACHINES = ["loggp:p=8", "alphabeta:topo=ring,p=8"];
const COLL = "allreduce", ALGO = "ring", BYTES = "64KiB";
const TIMEOUT = 20000;
// The uploaded network: two leaf switches of two hosts each (an edge list,
// docs/networks.md); its file name has a space, which the page makes '_'.
const NET_FILE = "my net.edges", NET_NAME = "my_net.edges";
const NET_TEXT = "switch s0\nswitch s1\nh0 s0 100Gbps 500ns\nh1 s0 100Gbps 500ns\n" +
  "h2 s1 100Gbps 500ns\nh3 s1 100Gbps 500ns\ns0 s1 25GB/s 1us\n";

let failures = 0, checks = 0;
const t0 = Date.now();
function check(ok, what, detail) {
  checks++;
  if (!ok) {
    failures++;
    console.error(`FAIL ${what}${detail ? ": " + detail : ""}`);
  }
  return ok;
}
function close(a, b, rel) {
  return Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-300);
}
function step(msg) {
  console.log(`page.test: ${((Date.now() - t0) / 1000).toFixed(1)}s ${msg}`);
}

// ---- the reference: the CLI ----------------------------------------------------

function parseCsv(text) {
  const rows = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const row = [];
    let cur = "", q = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (q) {
        if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; }
        else if (c === '"') q = false;
        else cur += c;
      } else if (c === '"') q = true;
      else if (c === ",") { row.push(cur); cur = ""; }
      else cur += c;
    }
    row.push(cur);
    rows.push(row);
  }
  const head = rows.shift();
  return rows.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}

function cliReference() {
  const csv = execFileSync(args.collsim, ["compare", "--coll", COLL, "--algo", ALGO, "--bytes", BYTES,
    "--machines", MACHINES.join(";"), "--csv", "-", "--no-timing"], { encoding: "utf8" });
  const rows = parseCsv(csv);
  const runs = MACHINES.map((m) => JSON.parse(execFileSync(args.collsim, ["run", "--machine", m,
    "--coll", COLL, "--algo", ALGO, "--bytes", BYTES, "--json", "-", "--no-timing"], { encoding: "utf8" })));
  return { rows, runs };
}

// ---- the page ------------------------------------------------------------------

async function tableOf(page) {
  return page.$$eval("#result-table tbody tr[data-run]", (trs) => trs.map((tr) => {
    const o = {};
    for (const td of tr.querySelectorAll("td[data-col]")) o[td.dataset.col] = td.dataset.value;
    return o;
  }));
}

async function waitDone(page, what) {
  try {
    await page.waitForFunction(() => {
      const s = document.getElementById("status").dataset.state;
      return s === "done" || s === "failed" || s === "cancelled";
    }, { timeout: TIMEOUT });
  } catch (e) {
    throw new Error(`${what}: no result within ${TIMEOUT / 1000} s (status: ` +
      `${await page.$eval("#status", (e) => e.textContent)})`);
  }
  const st = await page.$eval("#status", (e) => e.dataset.state);
  if (st !== "done") {
    const err = await page.evaluate(() => [...document.querySelectorAll(".err")].map((e) => e.textContent).join(" "));
    throw new Error(`${what}: the job ended '${st}': ${err}`);
  }
  await page.waitForSelector("#results[data-job]", { timeout: TIMEOUT });
}

// The heatmap <img> after its fetch settled: its URL and natural size.
async function heatmapShown(page, wantSrc) {
  await page.waitForFunction((want) => {
    const img = document.getElementById("heatmap");
    const err = document.getElementById("heatmap-error").textContent;
    if (err) return true;
    return img.complete && img.naturalWidth > 0 && img.dataset.src && (!want || img.dataset.src.includes(want));
  }, { timeout: TIMEOUT }, wantSrc || "");
  return page.$eval("#heatmap", (img) => ({ src: img.dataset.src, w: img.naturalWidth, h: img.naturalHeight,
    err: document.getElementById("heatmap-error").textContent }));
}

async function pngSize(url) {
  const res = await fetch(url);
  const buf = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200 || buf.length < 24 || buf.toString("latin1", 1, 4) !== "PNG")
    throw new Error(`heatmap ${url}: HTTP ${res.status}, ${buf.length} bytes, not a PNG`);
  if (res.headers.get("content-type") !== "image/png")
    check(false, "heatmap content type", res.headers.get("content-type"));
  return { w: buf.readUInt32BE(16), h: buf.readUInt32BE(20) };
}

function compareTable(rows, ref, label) {
  if (!check(rows.length === MACHINES.length, `${label}: one row per machine`, `${rows.length} rows`)) return;
  rows.forEach((r, k) => {
    const c = ref.rows[k], j = ref.runs[k], m = `${label} row ${k} (${MACHINES[k]})`;
    check(r.spec === c.spec && r.spec === j.machine.spec, `${m} spec`, `page '${r.spec}', CLI '${c.spec}'`);
    check(Number(r.ranks) === Number(c.ranks), `${m} ranks`, `page ${r.ranks}, CLI ${c.ranks}`);
    check(Number(r.ticks) === Number(c.ticks) && Number(r.ticks) === j.finish_ticks, `${m} ticks`,
      `page ${r.ticks}, CLI ${c.ticks} / ${j.finish_ticks}`);
    check(close(Number(r.seconds), j.finish_seconds, 1e-12) && close(Number(r.seconds), Number(c.seconds), 1e-9),
      `${m} seconds`, `page ${r.seconds}, CLI ${c.seconds}`);
    // The CSV prints bandwidths and util rounded (9 and 6 significant digits).
    check(close(Number(r.algbw), Number(c.algbw_bytes_per_s), 1e-8), `${m} algbw`,
      `page ${r.algbw}, CLI ${c.algbw_bytes_per_s}`);
    check(close(Number(r.busbw), Number(c.busbw_bytes_per_s), 1e-8), `${m} busbw`,
      `page ${r.busbw}, CLI ${c.busbw_bytes_per_s}`);
    check(r.busiest === c.busiest_link, `${m} busiest link`, `page '${r.busiest}', CLI '${c.busiest_link}'`);
    check(Math.abs(Number(r.util) - Number(c.busiest_util)) <= 1e-6, `${m} util`,
      `page ${r.util}, CLI ${c.busiest_util}`);
    check(Number(r.events) === Number(c.events) && Number(r.events) === j.events, `${m} events`,
      `page ${r.events}, CLI ${c.events}`);
  });
}

async function main() {
  const ref = cliReference();
  step(`CLI reference: ${ref.rows.map((r) => r.ticks + " ticks").join(", ")}`);
  check(ref.rows.length === 2 && ref.rows[0].ticks !== ref.rows[1].ticks,
    "the two machines give different times (the comparison means something)");

  const browser = await puppeteer.launch({
    executablePath: args.chromium,
    headless: true,
    protocolTimeout: 30000,
    // --no-sandbox: CI containers run as root, where chromium's sandbox refuses to start.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 900 });
    const pageErrors = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));
    // HTTP errors are checked from the responses (the bad size's 400 is intended).
    page.on("console", (msg) => {
      if (msg.type() === "error" && !msg.text().startsWith("Failed to load resource")) pageErrors.push(msg.text());
    });
    let intended400 = false;
    page.on("response", (r) => {
      if (r.status() >= 400 && !(intended400 && r.status() === 400 && r.url().endsWith("/api/run")))
        pageErrors.push(`HTTP ${r.status()} for ${r.request().method()} ${r.url()}`);
    });
    page.on("requestfailed", (r) => { if (!r.url().startsWith("blob:")) pageErrors.push("request failed: " + r.url()); });
    const posts = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(args.url) && !r.url().startsWith("blob:") && !r.url().startsWith("data:"))
        pageErrors.push("the page asked for an outside URL: " + r.url());
      if (r.method() === "POST") posts.push({ url: r.url(), ctype: r.headers()["content-type"] || "", body: r.postData() || "" });
    });

    await page.goto(args.url + "/", { waitUntil: "load", timeout: TIMEOUT });
    await page.waitForFunction(() => document.querySelectorAll("#machine-type option").length > 0 &&
      document.querySelectorAll("#algo option").length > 0, { timeout: TIMEOUT });
    step("page loaded, catalogue read");
    check(await page.$eval("#machine-keys", (b) => b.querySelectorAll("input[data-key]").length > 0),
      "the machine picker shows the keys of the chosen type");

    // The form: kind compare, two machines, allreduce/ring, 64 KiB.
    await page.select("#kind", "compare");
    await page.$eval("#machines", (t, v) => { t.value = v; }, MACHINES.join("\n"));
    await page.select("#coll", COLL);
    await page.select("#algo", ALGO);
    await page.$eval("#bytes", (e) => { e.value = ""; });
    await page.type("#bytes", BYTES);
    await page.click("#submit");
    await waitDone(page, "the comparison");
    step("comparison done");
    const rows = await tableOf(page);
    compareTable(rows, ref, "table");

    // The heatmap of the first run, then of the second in a time window:
    // "auto" draws small machines as SVG, then PNG is chosen by hand.
    let hm = await heatmapShown(page);
    check(!hm.err && hm.src.includes("/heatmap.svg?"), "auto format: an SVG heatmap for a small machine",
      `${hm.src} ${hm.err}`);
    await page.select("#heatmap-format", "png");
    hm = await heatmapShown(page, "/heatmap.png?");
    check(!hm.err, "heatmap loads", hm.err);
    if (!hm.err) {
      const png = await pngSize(new URL(hm.src, args.url).href);
      check(hm.w > 0 && hm.h > 0 && hm.w === png.w && hm.h === png.h, "heatmap rendered at the PNG's size",
        `img ${hm.w}x${hm.h}, PNG ${png.w}x${png.h}`);
    }
    check(await page.$eval("#plot", (i) => i.complete && i.naturalWidth > 0), "the plot (plot.svg) rendered");
    await page.select("#heatmap-run", "1");
    await page.$eval("#win-start", (e) => { e.value = 250; e.dispatchEvent(new Event("input")); });
    await page.$eval("#win-end", (e) => { e.value = 750; e.dispatchEvent(new Event("input")); });
    const T = ref.runs[1].finish_ticks;
    const want = `window=${Math.floor(T * 250 / 1000)}:${Math.ceil(T * 750 / 1000)}`;
    hm = await heatmapShown(page, want);
    check(!hm.err && hm.src.includes("run=1") && hm.src.includes(want), "the window slider re-requests the heatmap",
      `${hm.src} ${hm.err}`);
    if (!hm.err) {
      const png = await pngSize(new URL(hm.src, args.url).href);
      check(hm.w === png.w && hm.h === png.h && hm.w > 0, "windowed heatmap rendered at the PNG's size",
        `img ${hm.w}x${hm.h}, PNG ${png.w}x${png.h}`);
    }
    step("heatmaps checked");

    if (args.screenshot) {
      await page.select("#heatmap-run", "0");
      await page.$eval("#window-reset", (b) => b.click());
      await heatmapShown(page, "run=0");
      await page.screenshot({ path: args.screenshot, fullPage: true });
      step(`screenshot ${args.screenshot}`);
    }

    // The URL records the request: a fresh tab opening it gets the same comparison.
    const shared = page.url();
    const q = new URL(shared).searchParams;
    check(q.get("kind") === "compare" && q.get("machines") === MACHINES.join(";") && q.get("coll") === COLL &&
      q.get("algo") === ALGO && q.get("bytes") === BYTES, "the URL records the request", shared);
    const tab = await browser.newPage();
    tab.on("pageerror", (e) => pageErrors.push("reloaded page: " + e.message));
    await tab.goto(shared, { waitUntil: "load", timeout: TIMEOUT });
    await waitDone(tab, "the shared URL");
    const form = await tab.evaluate(() => ({ kind: document.getElementById("kind").value,
      machines: document.getElementById("machines").value, algo: document.getElementById("algo").value,
      bytes: document.getElementById("bytes").value }));
    check(form.kind === "compare" && form.machines === MACHINES.join("\n") && form.algo === ALGO && form.bytes === BYTES,
      "the shared URL fills the form", JSON.stringify(form));
    compareTable(await tableOf(tab), ref, "shared URL's table");
    await tab.close();
    await page.bringToFront(); // a background tab gets no animation frames: waitForFunction would stall
    step("shared URL reproduced the comparison");

    // The queue: a long job of another client holds the one worker, the
    // page's job waits and says so; then it runs once that job is cancelled.
    const other = await (await fetch(args.url + "/api/run", { method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ machine: "alphabeta:topo=torus,rows=16,cols=16", coll: COLL, bytes: "255MiB" }) })).json();
    for (let i = 0; i < 500; i++) {
      const j = await (await fetch(`${args.url}/api/jobs/${other.id}`)).json();
      if (j.state !== "queued") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    // Progress and cancel: a run of some seconds, cancelled while it runs.
    await page.select("#kind", "run");
    await page.$eval("#machines", (t) => { t.value = "alphabeta:topo=torus,rows=16,cols=16"; });
    await page.$eval("#bytes", (e) => { e.value = "256MiB"; });
    await page.click("#submit");
    try {
      await page.waitForFunction(() => document.getElementById("status").dataset.queue === "1", { timeout: TIMEOUT });
      const qt = await page.$eval("#status", (e) => e.textContent);
      check(/^queued: 1st in line, behind a running run \(\d+%, [\d.]+ s\) \(1 worker\)$/.test(qt),
        "a queued job shows its place and what it waits behind", qt);
    } catch (e) {
      check(false, "a queued job shows its place", await page.$eval("#status", (e) => e.textContent));
    }
    await fetch(`${args.url}/api/jobs/${other.id}`, { method: "DELETE" });
    await page.waitForFunction(() => document.getElementById("status").dataset.state === "running" &&
      !document.getElementById("progress").classList.contains("hidden") &&
      !document.getElementById("cancel").disabled, { timeout: TIMEOUT });
    await page.click("#cancel");
    await page.waitForFunction(() => !["running", "queued"].includes(document.getElementById("status").dataset.state),
      { timeout: TIMEOUT });
    const after = await page.$eval("#status", (e) => e.dataset.state + ": " + e.textContent);
    check(after.startsWith("cancelled"), "a running job shows its progress and Cancel stops it", after);
    step("cancel checked");

    // A bad size: the server's message, next to the bytes field.
    await page.$eval("#machines", (t) => { t.value = "loggp:p=8"; });
    await page.$eval("#bytes", (e) => { e.value = "abc"; });
    intended400 = true;
    await page.click("#submit");
    await page.waitForFunction(() => document.getElementById("err-bytes").textContent ||
      document.getElementById("error").textContent, { timeout: TIMEOUT });
    const bad = await page.$eval("#err-bytes", (e) => e.textContent);
    check(bad.includes("abc"), "a bad size is refused next to the bytes field, in the server's words",
      `#err-bytes '${bad}', #error '${await page.$eval("#error", (e) => e.textContent)}'`);

    // A job that fails on a field (a root beyond the machine's 8 nodes: known
    // once the machine is built, so accepted and then failed) shows the
    // server's message next to that field, named by the error's `field`.
    await page.$eval("#bytes", (e) => { e.value = "8"; });
    await page.select("#coll", "broadcast");
    await page.$eval("#ranks", (e) => { e.value = ""; });
    await page.$eval("#root", (e) => { e.value = "99"; });
    await page.click("#submit");
    await page.waitForFunction(() => document.getElementById("err-root").textContent ||
      document.getElementById("error").textContent, { timeout: TIMEOUT });
    const badRoot = await page.$eval("#err-root", (e) => e.textContent);
    check(badRoot.includes("--root 99"), "a failed job's error shows next to the field it names",
      `#err-root '${badRoot}', #error '${await page.$eval("#error", (e) => e.textContent)}'`);

    // A network file uploaded: sent inline, run as net:file=NAME.
    const dir = mkdtempSync(join(tmpdir(), "collsim-page-"));
    try {
      const path = join(dir, NET_FILE);
      writeFileSync(path, NET_TEXT);
      const cli = JSON.parse(execFileSync(args.collsim, ["run", "--machine", "net:file=" + path, "--coll", COLL,
        "--algo", ALGO, "--bytes", BYTES, "--json", "-", "--no-timing"], { encoding: "utf8" }));
      await page.$eval("#root", (e) => { e.value = ""; });
      await page.select("#coll", COLL);
      await page.select("#algo", ALGO);
      await page.$eval("#bytes", (e) => { e.value = ""; });
      await page.type("#bytes", BYTES);
      const input = await page.$("#netfile");
      await input.uploadFile(path);
      await page.waitForFunction((want) => document.getElementById("machines").value === want,
        { timeout: TIMEOUT }, "net:file=" + NET_NAME);
      check(await page.$eval("#machine-type", (e) => e.value) === "net", "an uploaded network picks the net: type");
      const before = posts.length;
      await page.click("#submit");
      // (a server without inline files refuses it: checked, the rest still runs)
      let done = true;
      try { await waitDone(page, "the run on the uploaded network"); }
      catch (e) { done = check(false, "the run on the uploaded network", e.message); }
      const sent = posts.slice(before).find((p) => p.url.endsWith("/api/run"));
      let body = {};
      try { body = JSON.parse(sent ? sent.body : "{}"); } catch (e) { /* checked below */ }
      check(body.machine === "net:file=" + NET_NAME && body.files && body.files[NET_NAME] === NET_TEXT &&
        Object.keys(body.files).length === 1, "the file is sent inline in the request's files, under a safe name",
        sent ? sent.body.slice(0, 300) : "no POST /api/run");
      const rows = done ? await tableOf(page) : [];
      if (done) check(rows.length === 1 && Number(rows[0].ticks) === cli.finish_ticks && Number(rows[0].ranks) === 4 &&
        rows[0].spec.startsWith("net:file=" + NET_NAME + ","), "the run on the uploaded network is the CLI's on the same file",
        `page ${JSON.stringify(rows[0])}, CLI ${cli.finish_ticks} ticks`);
      step("uploaded network run");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // A benchmark loop (issue 32): the loop fields go into the body, the
    // result panel says the loop's average, min and max, which are the CLI's.
    {
      const loopArgs = ["run", "--machine", "alphabeta:topo=line,p=4", "--coll", "broadcast", "--algo", "chain",
        "--bytes", "16KiB", "--opt", "seg=4KiB", "--iterations", "20", "--warmup", "5"];
      const cli = JSON.parse(execFileSync(args.collsim, [...loopArgs, "--json", "-", "--no-timing"], { encoding: "utf8" }));
      await page.$eval("#machines", (t) => { t.value = "alphabeta:topo=line,p=4"; });
      await page.select("#coll", "broadcast");
      await page.select("#algo", "chain");
      await page.$eval("#bytes", (e) => { e.value = "16KiB"; });
      await page.$eval("#opts", (e) => { e.value = "seg=4KiB"; });
      await page.$eval("#netfile", (e) => { e.value = ""; });
      await page.$eval("#iterations", (e) => { e.value = "20"; });
      await page.$eval("#warmup", (e) => { e.value = "5"; });
      const before = posts.length;
      await page.click("#submit");
      await waitDone(page, "the benchmark loop");
      const sent = posts.slice(before).find((p) => p.url.endsWith("/api/run"));
      const body = JSON.parse(sent ? sent.body : "{}");
      check(body.iterations === 20 && body.warmup === 5, "the loop's fields are sent as numbers", sent ? sent.body : "no POST");
      const job = await page.$eval("#results", (e) => e.dataset.job);
      const res = await (await fetch(`${args.url}/api/jobs/${job}/result`)).json();
      check(res.loop && res.loop.avg_ticks === cli.loop.avg_ticks && res.loop.iteration_max_ticks === cli.loop.iteration_max_ticks,
        "the page's loop is the CLI's", JSON.stringify(res.loop && res.loop.avg_ticks) + " vs " + cli.loop.avg_ticks);
      const summary = await page.$eval("#loop-summary", (e) => e.classList.contains("hidden") ? "" : e.textContent);
      check(/^loop: 20 timed \+ 5 warm-up iterations .*average .*min .*max .*busbw/.test(summary),
        "the result panel says the loop's average, min, max and busbw", summary);
      // the heatmap's colour range goes into its URL as scale=
      await page.$eval("#heatmap-scale", (e) => { e.value = "0:50"; e.dispatchEvent(new Event("change")); });
      const shown = await heatmapShown(page, "scale=0:50");
      check(!shown.err && shown.w > 0, "a heatmap with a fixed colour range is shown", JSON.stringify(shown));
      await page.$eval("#heatmap-scale", (e) => { e.value = ""; });
      await page.$eval("#iterations", (e) => { e.value = ""; });
      await page.$eval("#warmup", (e) => { e.value = ""; });
      step("benchmark loop and colour range");
    }

    const wrong = posts.filter((p) => !/^application\/json(;|$)/i.test(p.ctype));
    check(posts.length > 0 && wrong.length === 0, "every POST says Content-Type: application/json",
      wrong.map((p) => p.url + ": '" + p.ctype + "'").join("; "));
    check(pageErrors.length === 0, "no script error, failed or outside request", pageErrors.join("; "));
  } finally {
    await browser.close();
  }
}

main().then(() => {
  const s = ((Date.now() - t0) / 1000).toFixed(1);
  if (failures) {
    console.error(`page.test: ${failures} of ${checks} checks failed (${s} s)`);
    process.exit(1);
  }
  console.log(`page.test: ${checks} checks passed (${s} s)`);
}, (e) => {
  console.error(`page.test: FAIL ${e.message}`);
  process.exit(1);
});
