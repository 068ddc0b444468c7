"""Where a compare-page visit spends its time, to know what to make faster.

    .venv/bin/python bench/compare_profile.py [--site DIR] [--visits 3] [--low-wasm-cache-thresholds]

Serves the built site (``export.serve --gzip``, cross-origin isolated; built
now unless ``--site`` names one) and opens the compare page in Debian's
headless Chromium (WebGPU hidden, so Auto picks WebAssembly) ``--visits``
times in one browser profile: the first visit from the network, the later ones
through the service worker. For each visit it prints, in ms since navigation
started:

* when the HTML was parsed (domInteractive) and when the widget's own code
  (js/compare/compare.js), onnxruntime's bundle, its engine's JavaScript, the
  WebAssembly and the models were asked for and had arrived;
* how long ``WebAssembly.instantiateStreaming`` took (wrapped by an init script);
* each model's session start (``session_ms``, the page's own timing) and "Ready";
* from a Chrome trace: the main thread's busy time, and the WebAssembly
  functions V8 compiled lazily on the main thread (``wasm.CompileLazy``) or
  optimised in the background (``wasm.TopTierCompilation``), and whether a
  cached compiled module was used (``wasm.Deserialize``).

``--low-wasm-cache-thresholds`` starts Chromium with V8's code-caching
thresholds at their minimum, to show what a cached compiled engine would save
(Chrome caches a module's compiled code only after about 1 MB of optimised
code, which a visit of this page does not reach).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.site_visits import NO_WEBGPU, RUNTIME_CACHED_JS, build_site
from export.models import shipped_models
from export.serve import serve_in_thread
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS, WAIT_READY_JS, wait_until

MODELS = tuple(s.name for s in shipped_models())
LOW_CACHE_FLAGS = "--js-flags=--wasm-caching-threshold=1 --wasm-caching-hard-threshold=1 --wasm-caching-timeout-ms=50"
TRACE_CATEGORIES = ["v8.wasm", "devtools.timeline", "toplevel", "disabled-by-default-v8.wasm.detailed"]
# WebAssembly.instantiateStreaming's span, recorded before any page script runs.
INSTRUMENT = r"""(() => {
  const spans = (globalThis.__mhaSpans = []);
  const original = WebAssembly.instantiateStreaming;
  if (!original) return;
  WebAssembly.instantiateStreaming = function (...args) {
    const start = performance.now();
    const result = original.apply(this, args);
    result.then(() => spans.push({ what: "instantiateStreaming", start, end: performance.now() }), () => {});
    return result;
  };
})();"""
COLLECT_JS = r"""() => {
  const nav = performance.getEntriesByType("navigation")[0];
  return {
    domInteractive: nav.domInteractive,
    resources: performance.getEntriesByType("resource").map((e) => ({
      path: new URL(e.name).pathname, start: e.startTime, end: e.responseEnd })),
    spans: globalThis.__mhaSpans || [],
  };
}"""
# (label, how the path ends); the first request for each is shown.
WATCHED = [
    ("widget code", "/js/compare/compare.js"),
    ("onnxruntime bundle", "/ort.wasm.min.mjs"),
    ("engine JavaScript", "/ort-wasm-simd-threaded.mjs"),
    ("engine WebAssembly", "/ort-wasm-simd-threaded.wasm"),
] + [(f"model {m}", f"/models/{m}.onnx") for m in MODELS]
RUNTIME_FILES = [f"models/{m}.onnx" for m in MODELS] + ["ort/ort.wasm.min.mjs", "ort/ort-wasm-simd-threaded.wasm"]


def trace_summary(events: list[dict]) -> dict:
    """Main-thread busy time and V8's WebAssembly compilation from one page's trace."""
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    complete = [e for e in events if e.get("ph") == "X" and "dur" in e]
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for e in complete:
        if e["name"] in ("wasm.CompileLazy", "wasm.TopTierCompilation", "wasm.Deserialize"):
            by_name[e["name"]][0] += 1
            by_name[e["name"]][1] += e["dur"] / 1000
    busy = collections.Counter()
    for key, name in threads.items():
        if name != "CrRendererMain":
            continue
        end = -1.0
        for e in sorted((e for e in complete if (e["pid"], e["tid"]) == key), key=lambda e: e["ts"]):
            if e["ts"] >= end:  # top-level tasks only
                busy[key] += e["dur"] / 1000
                end = e["ts"] + e["dur"]
    return {"main_thread_busy_ms": max(busy.values(), default=0.0), **{k: tuple(v) for k, v in by_name.items()}}


def one_visit(context, url: str) -> dict:
    page = context.new_page()
    page.set_default_timeout(180000)
    cdp = context.new_cdp_session(page)
    events: list[dict] = []
    finished: list[bool] = []
    cdp.on("Tracing.dataCollected", lambda params: events.extend(params["value"]))
    cdp.on("Tracing.tracingComplete", lambda params: finished.append(True))
    cdp.send("Tracing.start", {"traceConfig": {"includedCategories": TRACE_CATEGORIES}, "transferMode": "ReportEvents"})
    page.goto(url + "compare/")
    ready = page.evaluate(WAIT_READY_JS)
    cdp.send("Tracing.end")
    page.wait_for_function("() => true")  # let the trace's last chunks arrive
    while not finished:
        page.wait_for_timeout(50)
    info = page.evaluate(COLLECT_JS)
    return {"page": page, "ready": ready, "info": info, "trace": trace_summary(events)}


def report(label: str, visit: dict) -> None:
    ready, info, trace = visit["ready"], visit["info"], visit["trace"]
    print(f"--- {label}: ready {ready['readyMs']:.0f} ms (three models started, 'Ready')")
    print(f"  HTML parsed (domInteractive)        {info['domInteractive']:7.0f}")
    for name, suffix in WATCHED:
        hits = [r for r in info["resources"] if r["path"].endswith(suffix)]
        if hits:
            print(f"  {name:34} {hits[0]['start']:7.0f} -> {hits[0]['end']:7.0f}")
    for span in info["spans"]:
        print(f"  WebAssembly.{span['what']:22} {span['start']:7.0f} -> {span['end']:7.0f}")
    sessions = ", ".join(f"{m} {t.get('session_ms', 0):.0f}" for m, t in ready["timings"].items())
    print(f"  sessions, one after the other (ms): {sessions}")
    print(f"  main thread busy while traced (navigation to ready): {trace['main_thread_busy_ms']:.0f} ms")
    for name in ("wasm.CompileLazy", "wasm.TopTierCompilation", "wasm.Deserialize"):
        count, ms = trace.get(name, (0, 0.0))
        print(f"  {name:26} {count:5d} x, {ms:6.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (default: build one now)")
    parser.add_argument("--visits", type=int, default=3)
    parser.add_argument("--low-wasm-cache-thresholds", action="store_true")
    args = parser.parse_args()
    site = args.site or build_site()
    from playwright.sync_api import sync_playwright

    server, url = serve_in_thread(site, isolation=True, compress=True)
    try:
        with sync_playwright() as pw:
            flags = [LOW_CACHE_FLAGS] if args.low_wasm_cache_thresholds else []
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + flags, headless=True)
            context = browser.new_context(service_workers="allow")
            context.add_init_script(NO_WEBGPU)
            context.add_init_script(INSTRUMENT)
            for i in range(args.visits):
                visit = one_visit(context, url)
                report("first visit" if i == 0 else f"visit {i + 1} (service worker)", visit)
                page = visit["page"]
                if i == 0:  # the next visit is a repeat only once the worker holds the runtime files
                    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
                    wait_until(page, RUNTIME_CACHED_JS, RUNTIME_FILES, timeout_ms=180000)
                page.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(json.dumps({"site": str(site), "low_wasm_cache_thresholds": args.low_wasm_cache_thresholds}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
