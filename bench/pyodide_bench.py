"""Benchmark the microgpt page's Python exercise in a real headless Chromium.

    .venv/bin/python bench/pyodide_bench.py [--site site] [--repeat 3]

Builds the site if --site has none, serves it locally (cross-origin isolated
and not), and reports:

* ready: from navigation start (performance.timeOrigin) to the Pyodide worker
  being ready to run code (Pyodide loaded, model written, checker imported),
  in a fresh browser context (empty HTTP cache: a cold start), then once more
  in the same context (warm: files cached);
* check: how long window.mhaExercise.check(solution) takes (median): the
  interpreter restored to its snapshot, the learner's code run, multi_head
  called on all 27 cases, the numbers judged by the page;
* explain: the same for a wrong answer (scores divided by HEAD_DIM), which
  the checker also diagnoses by trying the known mistakes;
* recovery: after a `while True: pass` answer hits the 5 s limit, the time
  until Python can run code again. Isolated pages interrupt Python through a
  SharedArrayBuffer (KeyboardInterrupt); other pages terminate the worker and
  start a new one.

Goals: ready <= 4 s, check < 100 ms, recovery <= 1 s when isolated.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from export.serve import serve_in_thread
from export.device import cpu_name
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS

SOLUTION = (ROOT / "site_src/pyodide/solution.py").read_text()
LOOP = SOLUTION.replace("out.extend(blended)", "while True:\n            pass")
WRONG = SOLUTION.replace("/ math.sqrt(HEAD_DIM)", "/ HEAD_DIM")

READY_JS = """async () => {
  for (let i = 0; i < 2400 && !window.mhaExercise; i++) await new Promise((r) => setTimeout(r, 25));
  const info = await window.mhaExercise.ready;
  return { readyAt: info.readyAt, startedAt: info.startedAt, stages: info.stages, isolated: info.isolated,
           python: info.python, pyodide: info.pyodide };
}"""
CHECK_JS = """async (source) => {
  const t0 = performance.now();
  const verdict = await window.mhaExercise.check(source);
  return { ms: performance.now() - t0, passed: verdict.passed, timedOut: verdict.timedOut };
}"""
RECOVER_JS = """async (loop) => {
  const verdict = await window.mhaExercise.check(loop);
  await window.mhaExercise.ready;
  const stop = window.mhaExercise.lastStop();
  // Python must really run again: time a tiny job too.
  const run = await window.mhaExercise.run("print(1)");
  const after = performance.now();
  return { timedOut: verdict.timedOut, how: stop.how, limitToReady: stop.readyAt - stop.limitAt,
           limitToFirstRun: after - stop.limitAt, runOk: run.ok };
}"""


def machine() -> str:
    cpu = cpu_name()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    try:
        chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except OSError:
        chromium = "chromium ?"
    return f"{cpu}, {os.cpu_count()} cores, load average {load}; {chromium}; {platform.system()} {platform.release()}"


def ensure_site(site: Path) -> Path:
    if not (site / "microgpt/index.html").is_file():
        print(f"building the site into {site} ...", flush=True)
        subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
            cwd=ROOT,
            check=True,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )
    return site


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="built site (built if missing)")
    parser.add_argument("--repeat", type=int, default=3, help="checks to time per page (default 3)")
    args = parser.parse_args(argv)
    site = ensure_site(args.site.resolve())
    from playwright.sync_api import sync_playwright

    print(f"machine: {machine()}")
    servers = {"isolated": serve_in_thread(site, isolation=True), "plain": serve_in_thread(site, isolation=False)}
    results = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            for mode, (_, url) in servers.items():
                context = browser.new_context()
                page = context.new_page()
                page.set_default_timeout(120000)
                page.goto(url + "microgpt/")
                cold = page.evaluate(READY_JS)
                assert cold["isolated"] is (mode == "isolated"), cold
                checks = [page.evaluate(CHECK_JS, SOLUTION) for _ in range(args.repeat)]
                assert all(c["passed"] for c in checks), checks
                explains = [page.evaluate(CHECK_JS, WRONG) for _ in range(args.repeat)]
                assert not any(c["passed"] for c in explains), explains
                recovery = page.evaluate(RECOVER_JS, LOOP)
                assert recovery["timedOut"] and recovery["runOk"], recovery
                page.reload()
                warm = page.evaluate(READY_JS)
                context.close()
                results[mode] = (cold, warm, checks, recovery, explains)
                print(f"\n[{mode}] Python {cold['python']}, Pyodide {cold['pyodide']}")
                print(
                    f"  ready, cold:  {cold['readyAt'] / 1000:.2f} s after navigation "
                    f"(worker started at {cold['startedAt'] / 1000:.2f} s; loadPyodide done "
                    f"{cold['stages']['loaded'] / 1000:.2f} s after that)"
                )
                print(f"  ready, warm:  {warm['readyAt'] / 1000:.2f} s after navigation (reload, files cached)")
                ms = [c["ms"] for c in checks]
                print(
                    f"  check:        median {statistics.median(ms):.0f} ms, fastest {min(ms):.0f} ms "
                    f"(first {ms[0]:.0f} ms, {len(ms)} runs)"
                )
                ms = [c["ms"] for c in explains]
                print(
                    f"  explain:      median {statistics.median(ms):.0f} ms, fastest {min(ms):.0f} ms for a wrong "
                    f"answer ({len(ms)} runs)"
                )
                print(
                    f"  runaway code: {recovery['how']}; Python ready {recovery['limitToReady']:.0f} ms after the "
                    f"5 s limit, first run done {recovery['limitToFirstRun']:.0f} ms after it"
                )
            browser.close()
    finally:
        for server, _ in servers.values():
            server.shutdown()
            server.server_close()
    iso = results["isolated"]
    print(
        "\ngoals: ready <= 4 s: {}; check < 100 ms: {}; isolated recovery <= 1 s: {}".format(
            "met" if iso[0]["readyAt"] <= 4000 else "NOT met",
            "met" if statistics.median(c["ms"] for c in iso[2]) < 100 else "NOT met",
            "met" if iso[3]["limitToFirstRun"] <= 1000 else "NOT met",
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
