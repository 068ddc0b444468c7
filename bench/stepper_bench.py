"""Page 4's forward-pass stepper: what it adds in bytes, and what a run and a step cost, in headless Chromium.

    .venv/bin/python bench/stepper_bench.py [--runs 30] [--site DIR] [--markdown]

Builds the site (``mkdocs build --strict`` into a temporary folder) unless
``--site`` names a built one, serves it cross-origin isolated on 127.0.0.1 and
reports, for the one-head and four-head teaching graphs (WebAssembly):

* the bytes the stepper adds to the site: each teaching graph (its weights are
  the shipped model file's, read as ONNX external data), the build's code
  sections (``js/lesson/stepper_code.json``) and the stepper's scripts and CSS;
* the bytes page 4 transfers before and after the learner opens the stepper
  (Resource Timing), so the cost of opening it shows, including the shipped
  model file it shares with the compare page;
* session creation, the median time of one run of the whole teaching graph on
  the prompt (``--runs`` runs after warm-up), and the median time to draw each
  step (Next/Back, measured around the widget's own render).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.browser_inference import NO_WEBGPU, RESOURCES_JS, build_site, machine
from export.serve import serve_in_thread
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS

PAGE4 = "lesson/4-model-training-generation/"
PROMPT = "Lily found a red ball in the park and she"
STEPPER_FILES = (
    "js/lesson/stepper.js",
    "js/lesson/stepper_view.js",
    "js/lesson/stepper_load.js",
    "js/lesson/stepper_run.js",
    "js/lesson/stepper_map.js",
    "js/lesson/stepper_listings.js",
    "js/lesson/stepper_steps.js",
    "js/lesson/stepper_steps_input.js",
    "js/lesson/stepper_steps_attention.js",
    "js/lesson/stepper_steps_output.js",
    "js/lesson/stepper_format.js",
    "js/lesson/stepper_predict.js",
    "js/lesson/stepper_draw.js",
    "js/lesson/stepper_code.json",
    "css/stepper.css",
)

TIME_JS = """async ([runs]) => {
  const w = window.mhaStepper.widget;
  const basics = await w.basics();
  const model = basics.models.find((m) => m.name === w.run.name);
  for (let i = 0; i < 5; i++) await w.compute(basics, model, w.input.value);
  const run = [];
  for (let i = 0; i < runs; i++) run.push((await w.compute(basics, model, w.input.value)).ms);
  const draw = {};
  for (let pass = 0; pass < 5; pass++) {
    w.index = 0; w.render();
    w.state.revealed = true;
    for (let k = 0; k < w.steps.length; k++) {
      const t = performance.now();
      w.index = k; w.render();
      (draw[w.steps[k].key] ||= []).push(performance.now() - t);
    }
  }
  return { run, draw };
}"""


def median(xs):
    return statistics.median(xs)


def measure(browser, url: str, model: str, runs: int) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(NO_WEBGPU)
    page = context.new_page()
    page.set_default_timeout(120000)
    page.goto(url + PAGE4)
    page.wait_for_load_state("networkidle")
    before = page.evaluate(RESOURCES_JS)
    page.check(f".mha-st__models input[value='{model}']")
    page.fill(".mha-st__input", PROMPT)
    page.press(".mha-st__input", "Enter")
    page.wait_for_function("() => window.mhaStepper")
    state = page.evaluate("async () => { await window.mhaStepper.ready; return window.mhaStepper.state(); }")
    after = page.evaluate(RESOURCES_JS)
    timed = page.evaluate(TIME_JS, [runs])
    context.close()
    total = lambda rs: sum(r["transfer"] for r in rs)
    opened = [r for r in after if r["name"] not in {b["name"] for b in before}]
    return {
        "state": state,
        "before": total(before),
        "opened": total(opened),
        "opened_files": sorted({r["name"].split("/")[-1] for r in opened}),
        "run_ms": median(timed["run"]),
        "first_run_ms": state["ms"],
        "session_ms": state["sessionMs"],
        "draw_ms": {k: median(v) for k, v in timed["draw"].items()},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--site", type=Path)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    site = args.site or build_site()
    manifest = json.loads((site / "wasm_assets/models/manifest.json").read_text())
    steps = {m["name"]: m["steps"] for m in manifest["models"] if m.get("steps")}
    heads = {m["name"]: m["heads"] for m in manifest["models"]}
    labels = {m["name"]: m["label"] for m in manifest["models"]}
    most = max(steps, key=heads.get)  # the stepper's default model: the manifest's most heads
    added = {name: s["bytes"] for name, s in steps.items()}
    files = {f: (site / f).stat().st_size for f in STEPPER_FILES}
    from playwright.sync_api import sync_playwright

    server, url = serve_in_thread(site, isolation=True)
    results = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            measure(browser, url, most, 3)  # warm caches
            for name in steps:
                results[name] = measure(browser, url, name, args.runs)
        finally:
            browser.close()
    server.shutdown()
    lines = [
        f"Machine: {machine()}",
        f"Prompt: {PROMPT!r} ({len([i for i in results[most]['state']['ids'] if i])} ids); "
        f"median of {args.runs} runs after 5 warm-up runs; step drawing: median of 5 passes.",
        "",
        "Bytes the stepper adds to the site:",
        "",
    ]
    for name, b in added.items():
        lines.append(f"- {steps[name]['file']}: {b:,} bytes (weights: {steps[name]['weights']}, shared)")
    for f, b in files.items():
        lines.append(f"- {f}: {b:,} bytes")
    lines.append(f"- total: {sum(added.values()) + sum(files.values()):,} bytes")
    lines += [
        "",
        "| model | session creation ms | one run of the teaching graph ms (median) | page 4 before opening kB | opening the stepper kB | slowest step to draw ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in results.items():
        slow = max(r["draw_ms"], key=r["draw_ms"].get)
        lines.append(
            f"| {name} | {r['session_ms']:.0f} | {r['run_ms']:.1f} | {r['before'] / 1e3:.0f} | {r['opened'] / 1e3:.0f} | "
            f"{r['draw_ms'][slow]:.1f} ({slow}) |"
        )
    lines += [
        "",
        "Time to draw each step (ms, median), four heads: "
        + ", ".join(f"{k} {v:.1f}" for k, v in results[most]["draw_ms"].items()),
        f"Files fetched when the stepper opens ({labels[most].lower()}): " + ", ".join(results[most]["opened_files"]),
    ]
    text = "\n".join(lines)
    print(f"```\n{text}\n```" if args.markdown else text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
