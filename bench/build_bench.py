"""The build exercise (lesson/build/): how soon the first Check can answer, a Check, and the continuation.

    .venv/bin/python bench/build_bench.py [--site DIR] [--repeats 3]

Builds the site unless ``--site`` names a built one, serves it cross-origin
isolated on 127.0.0.1 and drives headless Chromium with the service worker on:

* ready: from navigation start until the page's first Check can answer (its
  Python worker ready and the teaching graph run on the prompt), on a first
  visit (empty profile) and on a repeat visit (the same profile, reloaded once
  the service worker controls the page);
* one Check of ``project`` and of ``multi_head_attention`` (a correct solution)
  on a 16-token prompt, each in its own fresh worker: wall time as the page
  sees it, the median of ``--repeats``;
* the 12-word continuation the learner's function drives (12 jobs, each a fresh
  worker, plus the model's own 12 steps).
"""
from __future__ import annotations

import argparse
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
PROMPT = "once upon a time there was a little girl named lily . she liked to"   # 16 tokens with BOS
SOLUTION = (ROOT / "tests" / "pyodide" / "build_solution.py").read_text()
READY_JS = """async () => {
  for (let i = 0; i < 4000 && !window.mhaBuild; i++) await new Promise((r) => setTimeout(r, 10));
  await window.mhaBuild.ready;
  return performance.now();
}"""
TIMED_JS = """async ([what, name, source]) => {
  const t = performance.now();
  const out = what === "drive" ? await window.mhaBuild.drive(source) : await window.mhaBuild.check(name, source);
  return { ms: performance.now() - t, ok: what === "drive" ? out.same : out.passed };
}"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="an already built site (default: build one)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    site = args.site or build_site()
    server, url = serve_in_thread(site, isolation=True)
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(180000)
        page.goto(url + PAGE)
        rows.append(("ready, first visit (empty profile)", page.evaluate(READY_JS)))
        page.wait_for_function("() => navigator.serviceWorker && navigator.serviceWorker.controller")
        page.wait_for_timeout(3000)   # the service worker stores what the first visit fetched
        for i in range(args.repeats):
            page.reload()
            rows.append((f"ready, repeat visit {i + 1}", page.evaluate(READY_JS)))
        assert page.evaluate("(t) => window.mhaBuild.setPrompt(t)", PROMPT)
        for name in ("project", "split_heads", "scores", "causal_softmax", "blend", "multi_head_attention"):
            times = []
            for _ in range(args.repeats if name in ("project", "multi_head_attention") else 1):
                out = page.evaluate(TIMED_JS, ["check", name, SOLUTION])
                assert out["ok"], name
                times.append(out["ms"])
            if name in ("project", "multi_head_attention"):
                rows.append((f"Check {name}, 16 tokens (median of {len(times)})", statistics.median(times)))
        out = page.evaluate(TIMED_JS, ["drive", "", SOLUTION])
        assert out["ok"]
        rows.append(("12-word continuation driven by the learner's function (12 jobs)", out["ms"]))
        browser.close()
    server.shutdown()
    print(f"Machine: {machine()}")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; prompt: {PROMPT!r}")
    print()
    print("| what | ms |")
    print("| --- | ---: |")
    for what, ms in rows:
        print(f"| {what} | {ms:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
