"""The build exercise (lesson/build/): how soon the first Check can answer, a Check, and the continuation.

    .venv/bin/python bench/build_bench.py [--site DIR] [--visits 3] [--repeats 3]

Builds the site unless ``--site`` names a built one, serves it cross-origin
isolated on 127.0.0.1 and drives headless Chromium with the service worker on:

* ready: from navigation start until the page's first Check can answer (its
  Python worker ready and the teaching graph run on the prompt), on first
  visits (each in an empty profile) and on repeat visits (the last profile,
  reloaded once the service worker controls the page); with each, when Python
  was ready and when the graph's numbers were in;
* a Check of each function on a 16-token prompt (a correct solution), with the
  next Python already started (the learner reads a verdict before the next
  Check), the median of ``--repeats``; and a Check of ``multi_head_attention``
  straight after another one, which waits for that next Python to start;
* the 12-word continuation the learner's function drives (12 jobs in one
  fresh Python, plus the model's own 12 steps): the whole, and each word.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.browser_inference import build_site, machine  # noqa: E402
from export.serve import serve_in_thread  # noqa: E402
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

PAGE = "lesson/build/"
PROMPT = "once upon a time there was a little girl named lily . she liked to"  # 16 tokens with BOS
FUNCTIONS = ("project", "split_heads", "scores", "causal_softmax", "blend", "multi_head_attention")
SOLUTION = (ROOT / "tests" / "pyodide" / "build_solution.py").read_text()
READY_JS = """async () => {
  for (let i = 0; i < 4000 && !window.mhaBuild; i++) await new Promise((r) => setTimeout(r, 10));
  const info = await window.mhaBuild.ready;
  return { ready: performance.now(), python: info.readyAt, graph: info.graphAt, start: info.start };
}"""
SPARE_READY_JS = "() => document.querySelector('.mha-build .mgpt-ex__status').dataset.phase === 'ready'"
TIMED_JS = """async ([what, name, source]) => {
  const t = performance.now();
  const out = what === "drive" ? await window.mhaBuild.drive(source) : await window.mhaBuild.check(name, source);
  return { ms: performance.now() - t, ok: what === "drive" ? out.same : out.passed, timings: out.timings || null };
}"""


def visit(page, rows, label):
    got = page.evaluate(READY_JS)
    rows.append((label, got))
    return got


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="an already built site (default: build one)")
    parser.add_argument("--visits", type=int, default=3, help="first visits, and repeat visits (default 3 each)")
    parser.add_argument("--repeats", type=int, default=3, help="Checks per function (default 3)")
    args = parser.parse_args(argv)
    site = args.site or build_site()
    server, url = serve_in_thread(site, isolation=True)
    from playwright.sync_api import sync_playwright

    load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    first, repeat = [], []
    checks: dict[str, list[float]] = {name: [] for name in FUNCTIONS}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for i in range(args.visits):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(180000)
            page.goto(url + PAGE)
            visit(page, first, f"first visit {i + 1}")
            if i < args.visits - 1:
                context.close()
        page.wait_for_function("() => navigator.serviceWorker && navigator.serviceWorker.controller")
        page.wait_for_timeout(3000)  # the service worker stores what the first visit fetched
        for i in range(args.visits):
            page.reload()
            visit(page, repeat, f"repeat visit {i + 1}")
        assert page.evaluate("(t) => window.mhaBuild.setPrompt(t)", PROMPT)
        for _ in range(args.repeats):
            for name in FUNCTIONS:
                page.wait_for_function(SPARE_READY_JS)
                out = page.evaluate(TIMED_JS, ["check", name, SOLUTION])
                assert out["ok"], name
                checks[name].append(out["ms"])
        back_to_back = []
        for _ in range(args.repeats):
            out = page.evaluate(TIMED_JS, ["check", "multi_head_attention", SOLUTION])
            assert out["ok"]
            back_to_back.append(out["ms"])
        page.wait_for_function(SPARE_READY_JS)
        drive = page.evaluate(TIMED_JS, ["drive", "", SOLUTION])
        assert drive["ok"]
        browser.close()
    server.shutdown()
    load_after = ", ".join(f"{x:.1f}" for x in os.getloadavg())

    def ms(value):  # (a site from before graphAt and timings existed has neither)
        return f"{value:,.0f}" if isinstance(value, (int, float)) else "–"

    def ready_rows(rows):
        return [f"{ms(r['ready'])} (Python {ms(r['python'])}, graph {ms(r['graph'])})" for _, r in rows]

    steps, jobs = (drive["timings"]["steps"], drive["timings"]["jobs"]) if drive["timings"] else ([], [])
    print(f"Machine: {machine()}")
    print(f"Load average before: {load_before}; after: {load_after}")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; prompt: {PROMPT!r} (16 tokens with BOS)")
    print()
    print("| what | median ms | each run, ms |")
    print("| --- | ---: | --- |")
    for label, rows in (("ready, first visit (empty profile)", first), ("ready, repeat visit", repeat)):
        print(f"| {label} | {statistics.median(r['ready'] for _, r in rows):,.0f} | {'; '.join(ready_rows(rows))} |")
    for name in FUNCTIONS:
        print(
            f"| Check {name}, next Python started | {statistics.median(checks[name]):,.0f} | "
            f"{', '.join(f'{ms:,.0f}' for ms in checks[name])} |"
        )
    print(
        f"| Check multi_head_attention straight after another | {statistics.median(back_to_back):,.0f} | "
        f"{', '.join(f'{ms:,.0f}' for ms in back_to_back)} |"
    )
    each = (
        (
            f"{len(steps)} words; per word median {statistics.median(steps):,.0f}, slowest {max(steps):,.0f}; "
            f"the learner's call within it median {statistics.median(jobs):,.0f}"
        )
        if steps
        else "–"
    )
    print(f"| 12-word continuation driven by the learner's function | {drive['ms']:,.0f} | {each} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
