"""Per-token latency with and without the head_mask input, in headless Chromium (WebAssembly) and onnxruntime-Python.

    .venv/bin/python bench/head_mask_latency.py [--runs 300] [--rounds 6] [--before COMMIT] [--site DIR]

"Without" is the attention models as committed at ``--before`` (the last commit
before the mask input: ids only); "with" is the current models, fed ones for the
mask exactly as the compare page does. Both go through the site's own
``ModelRunner`` (site_src/js/runtime/ort_session.js) on one WebAssembly thread, on the
same window, alternating in ``--rounds`` blocks so that load drift hits both
alike; each figure is the median of all timed runs. Python uses one intra-op
thread and the browser runtime's ``session.disable_quant_qdq`` option.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
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
from export.models import attention_models
from export.device import cpu_name
from tests.browser_util import CHROMIUM, CHROMIUM_ARGS

MODELS = tuple(s.name for s in attention_models())  # the registry's, never typed
HEADS = {s.name: s.heads for s in attention_models()}
BEFORE = "5e90dc1"  # the last commit whose attention models had no head_mask input
PROMPT = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park"

BROWSER_JS = """async ([names, runs, rounds, T, prompt, headsOf]) => {
  const root = new URL("../", document.baseURI);  // the page is <site>/compare/
  const at = (path) => new URL(path, root).href;
  const ort_js = await import(at("js/runtime/ort.js"));
  const tok = await import(at("js/runtime/tokenizer.js"));
  const gen = await import(at("js/runtime/generate.js"));
  const vocab = new tok.Vocabulary(await (await fetch(at("wasm_assets/vocab.json"))).json());
  const window = gen.contextWindow(gen.promptHistory(vocab, prompt), T, vocab.special.PAD);
  const ort = await ort_js.loadOrt("wasm");
  const out = {};
  for (const name of names) {
    const heads = headsOf[name];
    const runners = {};
    for (const [variant, url] of [["without", `bench_before/${name}.onnx`], ["with", `wasm_assets/models/${name}.onnx`]]) {
      const bytes = new Uint8Array(await (await fetch(at(url))).arrayBuffer());
      runners[variant] = await ort_js.ModelRunner.create(ort, bytes, { name, T, heads }, "wasm");
      for (let i = 0; i < 30; i++) await runners[variant].run(window);
    }
    const times = { without: [], with: [] };
    for (let r = 0; r < rounds; r++) {
      for (const variant of r % 2 ? ["with", "without"] : ["without", "with"]) {
        for (let i = 0; i < runs / rounds; i++) {
          const t0 = performance.now();
          await runners[variant].run(window);
          times[variant].push(performance.now() - t0);
        }
      }
    }
    out[name] = { inputs: { without: runners.without.session.inputNames, with: runners.with.session.inputNames }, times };
    for (const r of Object.values(runners)) await r.release();
  }
  return { out, window, crossOriginIsolated };
}"""


def python_latency(site: Path, window: list[int], runs: int, rounds: int) -> dict:
    import numpy as np
    import onnxruntime as ort

    x = np.array([window], dtype=np.int64)
    result = {}
    for name in MODELS:
        sessions = {}
        for variant, path in (
            ("without", site / f"bench_before/{name}.onnx"),
            ("with", site / f"wasm_assets/models/{name}.onnx"),
        ):
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.add_session_config_entry("session.disable_quant_qdq", "1")
            sess = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            sessions[variant] = (sess, feeds(sess, x))
            for _ in range(30):
                sess.run(None, sessions[variant][1])
        times = {"without": [], "with": []}
        for r in range(rounds):
            for variant in ("with", "without") if r % 2 else ("without", "with"):
                sess, inputs = sessions[variant]
                for _ in range(runs // rounds):
                    t0 = time.perf_counter()
                    sess.run(None, inputs)
                    times[variant].append((time.perf_counter() - t0) * 1000)
        result[name] = times
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300, help="timed runs per model and variant")
    parser.add_argument("--rounds", type=int, default=6, help="alternating blocks the runs are split into")
    parser.add_argument("--before", default=BEFORE, help="commit holding the models without the mask input")
    parser.add_argument("--site", help="an already built site (default: build one into a temporary folder)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    tmp = Path(tempfile.mkdtemp(prefix="mha-bench-"))
    site = Path(args.site) if args.site else tmp / "site"
    if not args.site:
        subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(site)],
            cwd=ROOT,
            check=True,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )
    before = site / "bench_before"
    before.mkdir(exist_ok=True)
    for name in MODELS:
        blob = subprocess.run(
            ["git", "show", f"{args.before}:wasm_assets/models/{name}.onnx"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        (before / f"{name}.onnx").write_bytes(blob)
    from playwright.sync_api import sync_playwright

    # Cross-origin isolated for a fine performance.now() (it is coarsened to 0.1 ms otherwise),
    # with ?threads=1: one WebAssembly thread, like the Python side.
    server, url = serve_in_thread(site, isolation=True)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page()
            page.set_default_timeout(300000)
            page.goto(url + "compare/?threads=1")
            browser_result = page.evaluate(BROWSER_JS, [list(MODELS), args.runs, args.rounds, 64, PROMPT, HEADS])
            chromium = browser.version
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    for name in MODELS:  # the comparison is only fair if "without" really lacks the input
        if browser_result["out"][name]["inputs"] != {"without": ["ids"], "with": ["ids", "head_mask"]}:
            raise SystemExit(f"{name}: unexpected inputs {browser_result['out'][name]['inputs']}; check --before")
    py = python_latency(site, browser_result["window"], args.runs, args.rounds)
    shutil.rmtree(tmp, ignore_errors=True)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(
        f"Machine: {cpu_name()}, {os.cpu_count()} cores, load average {load}, {platform.system()} "
        f"{platform.release()}; Chromium {chromium}; models without the mask from commit {args.before}"
    )
    print(
        f"Runs: median of {args.runs} single-window runs (B=1) per model and variant, in {args.rounds} "
        "alternating blocks, after 30 warm-up runs; one WebAssembly thread (isolated, ?threads=1), one Python thread.\n"
    )
    print("| model | runtime | without head_mask, ms/token | with head_mask (ones), ms/token | change |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name in MODELS:
        for runtime, times in (("WebAssembly", browser_result["out"][name]["times"]), ("onnxruntime-Python", py[name])):
            a, b = statistics.median(times["without"]), statistics.median(times["with"])
            print(f"| {name} | {runtime} | {a:.3f} | {b:.3f} | {100 * (b / a - 1):+.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
