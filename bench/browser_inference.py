"""Browser inference benchmark: the three models in Debian's headless Chromium.

    .venv/bin/python bench/browser_inference.py [--runs 200] [--site DIR] [--markdown]

Builds the site (``mkdocs build --strict`` into a temporary folder) unless
``--site`` names a built one, serves it with ``export.serve`` on 127.0.0.1 and
reports, per model:

* per-token latency in the browser on WebAssembly: the median of ``--runs``
  single-window runs (B = 1, one full ``session.run`` including the int64
  input tensor and reading the logits back), after warm-up runs;
* the same median through onnxruntime for Python (CPU provider, one intra-op
  thread, same window and the same ``session.disable_quant_qdq`` option, which
  folds the int8 weights to float32 at load), and the browser / Python ratio;
* session creation time in the browser;

and for the compare page: the time from navigation start to "ready to
generate" (all three sessions created and warmed up) and the bytes it
transferred (Resource Timing transferSize). It measures the page both cross-
origin isolated (COOP/COEP, as ``make serve`` sends; several WASM threads) and
without isolation (one thread). WebGPU is hidden from the page so Auto picks
WebAssembly, as on a machine without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from export.onnx_export import feeds
from export.serve import serve_in_thread
from export.models import most_heads_model, shipped_models
from export.device import cpu_name
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS, WAIT_READY_JS

MODELS = tuple(s.name for s in shipped_models())  # the registry's, never typed
MOST = most_heads_model().name  # the goal is stated for the model with the most heads
PROMPT = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park"
NO_WEBGPU = "Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined, configurable: true });"
GOALS = {"four_heads_ms": 1.0, "ratio": 1.5, "ready_s": 1.5, "model_mb": 6.0}


def build_site() -> Path:
    out = Path(tempfile.mkdtemp(prefix="mha-bench-")) / "site"
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out


def python_latency(site: Path, window: list[int], runs: int) -> dict[str, float]:
    import numpy as np
    import onnxruntime as ort

    x = np.array([window], dtype=np.int64)
    out = {}
    for name in MODELS:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.add_session_config_entry("session.disable_quant_qdq", "1")  # as the browser runtime does
        session = ort.InferenceSession(
            str(site / f"wasm_assets/models/{name}.onnx"), options, providers=["CPUExecutionProvider"]
        )
        inputs = feeds(session, x)  # the attention models' head mask: ones
        for _ in range(20):
            session.run(None, inputs)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            session.run(None, inputs)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = statistics.median(times)
    return out


RESOURCES_JS = """() => {
  const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
  return entries.map((e) => ({ name: e.name, transfer: e.transferSize || 0, body: e.encodedBodySize || 0 }));
}"""


def measure_page(browser, url: str, runs: int) -> dict:
    context = browser.new_context()
    context.add_init_script(NO_WEBGPU)
    page = context.new_page()
    page.set_default_timeout(120000)
    page.goto(url + "compare/")
    state = page.evaluate(WAIT_READY_JS)
    if not state["ok"]:
        raise SystemExit(f"the compare page did not get ready: {json.dumps(state)}")
    resources = page.evaluate(RESOURCES_JS)
    window = page.evaluate("(t) => window.mhaCompare.window(t)", PROMPT)
    latency = {}
    for name in MODELS:
        times = page.evaluate(
            "([n, p, r]) => window.mhaCompare.time(n, p, {runs: r, warmup: 20})", [name, PROMPT, runs]
        )
        latency[name] = statistics.median(times)
    page.reload()  # same browser profile: cached files and compiled WebAssembly
    warm = page.evaluate(WAIT_READY_JS)
    context.close()
    total = sum(r["transfer"] for r in resources)
    models = sum(r["transfer"] for r in resources if "/wasm_assets/models/" in r["name"] and ".onnx" in r["name"])
    vocab = sum(r["transfer"] for r in resources if r["name"].endswith("/wasm_assets/vocab.json"))
    runtime = sum(r["transfer"] for r in resources if "/vendor/ort/" in r["name"])
    return {
        "state": state,
        "window": window,
        "latency": latency,
        "bytes_total": total,
        "bytes_models": models,
        "bytes_vocab": vocab,
        "bytes_runtime": runtime,
        "ready_s": state["readyMs"] / 1000,
        "ready_warm_s": warm["readyMs"] / 1000,
    }


def machine() -> str:
    cpu = cpu_name()
    chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{cpu}, {os.cpu_count()} cores, load average {load}, {platform.system()} {platform.release()}; {chromium}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="timed runs per model (default 200)")
    parser.add_argument("--site", type=Path, help="an already built site (default: build one)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown section for bench/RESULTS.md")
    parser.add_argument(
        "--gzip",
        action="store_true",
        help="serve compressed (export.serve --gzip), as most static hosts do; default: uncompressed",
    )
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium (make bench installs it)", file=sys.stderr)
        return 2
    site = args.site or build_site()
    if not (site / "wasm_assets/models/manifest.json").is_file():
        print("the site has no models: run `make models` and build again", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    isolated_server, isolated_url = serve_in_thread(site, isolation=True, compress=args.gzip)
    plain_server, plain_url = serve_in_thread(site, isolation=False, compress=args.gzip)
    results = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for label, url in (("isolated", isolated_url), ("plain", plain_url)):
                measure_page(browser, url, 5)  # warm the OS file cache and Chromium's compiled-code cache
                results[label] = measure_page(browser, url, args.runs)
        finally:
            browser.close()
    for server in (isolated_server, plain_server):
        server.shutdown()
    py = python_latency(site, results["isolated"]["window"], args.runs)
    manifest = json.loads((site / "wasm_assets/models/manifest.json").read_text())
    model_bytes = sum(m["bytes"] for m in manifest["models"]) + (site / "wasm_assets/vocab.json").stat().st_size

    iso, plain = results["isolated"], results["plain"]
    lines = [
        f"Machine: {machine()}",
        f"Runs: median of {args.runs} single-window runs (B=1) after 20 warm-up runs; prompt of "
        f"{len([i for i in iso['window'] if i])} ids.",
        "",
        "| model | WASM, isolated ({} threads) ms/token | WASM, not isolated (1 thread) ms/token | onnxruntime-Python (1 thread) ms | ratio (best WASM / Python) | session creation ms |".format(
            iso["state"]["threads"]
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios = {}
    for name in MODELS:
        best = min(iso["latency"][name], plain["latency"][name])
        ratios[name] = best / py[name]
        session_ms = iso["state"]["timings"].get(name, {}).get("session_ms")
        lines.append(
            f"| {name} | {iso['latency'][name]:.3f} | {plain['latency'][name]:.3f} | {py[name]:.3f} | "
            f"{ratios[name]:.2f}x | {session_ms:.0f} |"
        )
    lines += [
        "",
        f"Compare page, navigation start to ready to generate: {iso['ready_s']:.2f} s isolated, "
        f"{plain['ready_s']:.2f} s not isolated (localhost, fresh browser profile); after a reload "
        f"(files and compiled WebAssembly cached): {iso['ready_warm_s']:.2f} s isolated, {plain['ready_warm_s']:.2f} s not isolated.",
        f"Bytes transferred by the compare page until ready ({'gzip' if args.gzip else 'uncompressed'}): {iso['bytes_total'] / 1e6:.2f} MB "
        f"(models {iso['bytes_models'] / 1e6:.2f} MB, vocabulary {iso['bytes_vocab'] / 1e6:.2f} MB, "
        f"onnxruntime JS + WASM {iso['bytes_runtime'] / 1e6:.2f} MB).",
        f"Models + vocabulary on disk: {model_bytes / 1e6:.2f} MB.",
        "",
        "Goals: four heads on WASM <= {four_heads_ms} ms/token: {a}; <= {ratio}x onnxruntime-Python: {b}; "
        "ready <= {ready_s} s: {c}; models + vocabulary <= {model_mb} MB: {d}.".format(
            **GOALS,
            a="met" if min(iso["latency"][MOST], plain["latency"][MOST]) <= GOALS["four_heads_ms"] else "NOT met",
            b="met" if ratios[MOST] <= GOALS["ratio"] else "NOT met",
            c="met" if iso["ready_s"] <= GOALS["ready_s"] else "NOT met",
            d="met" if model_bytes / 1e6 <= GOALS["model_mb"] else "NOT met",
        ),
    ]
    text = "\n".join(lines)
    if args.markdown:
        print(f"## Browser inference\n\nRun on {time.strftime('%Y-%m-%d')} with `python bench/browser_inference.py`.\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
