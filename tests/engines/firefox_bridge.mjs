// Debian's Firefox (firefox-esr) for the Python tests, driven by puppeteer-core over
// WebDriver BiDi: Playwright cannot drive a stock Firefox, and the npm geckodriver
// package would download a binary. One browser per process; commands arrive as JSON
// lines on stdin ({id, cmd, ...}) and each gets one JSON line back on stdout
// ({id, ok, value} or {id, ok: false, error}). tests/engines/drivers.py is the other end.

import readline from "node:readline";
import puppeteer from "puppeteer-core";

const executablePath = process.env.FIREFOX || "/usr/bin/firefox-esr";
const browser = await puppeteer.launch({ browser: "firefox", executablePath, headless: true });
const tabs = new Map(); // id -> {context, page, errors}
let nextTab = 1;

function describe(err) {
  return String((err && (err.stack || err.message)) || err);
}

const commands = {
  async version() {
    return browser.version();
  },
  // A tab in a fresh browser context: nothing stored by an earlier tab (service
  // workers, caches, storage) reaches it.
  async open({ width, height }) {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    const tab = { context, page, errors: [] };
    page.on("pageerror", (err) => tab.errors.push(`uncaught: ${describe(err)}`));
    page.on("console", (msg) => {
      if (msg.type() === "error") tab.errors.push(`console error: ${msg.text()}`);
    });
    await page.setViewport({ width, height });
    const id = nextTab++;
    tabs.set(id, tab);
    return id;
  },
  async goto({ tab, url, timeout }) {
    await tabs.get(tab).page.goto(url, { waitUntil: "load", timeout });
    return null;
  },
  async reload({ tab, timeout }) {
    await tabs.get(tab).page.reload({ waitUntil: "load", timeout });
    return null;
  },
  // `source` is a JavaScript function (async or not); its value must be JSON.
  async evaluate({ tab, source, arg }) {
    return tabs.get(tab).page.evaluate(`(${source})(${JSON.stringify(arg ?? null)})`);
  },
  async errors({ tab }) {
    const t = tabs.get(tab);
    const found = t.errors;
    t.errors = [];
    return found;
  },
  async close({ tab }) {
    const t = tabs.get(tab);
    tabs.delete(tab);
    if (t) await t.context.close();
    return null;
  },
};

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { id, cmd, ...args } = JSON.parse(line);
  if (cmd === "quit") break;
  let reply;
  try {
    reply = { id, ok: true, value: (await commands[cmd](args)) ?? null };
  } catch (err) {
    reply = { id, ok: false, error: describe(err) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
await browser.close();
process.exit(0);
