"""Print the ONNX weight-encoding comparison recorded in wasm_assets/evidence.json.

`python -m export onnx` tries float32 and int8-per-row weight storage for each
model and keeps int8 only when the greedy preset continuation is unchanged and
test perplexity moves by less than 0.5 %. This prints what it measured.
"""
import json
import sys
from pathlib import Path

path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "wasm_assets/evidence.json")
evidence = json.loads(path.read_text())
onnx = evidence.get("onnx")
if not onnx:
    sys.exit(f"{path} has no 'onnx' section: run `python -m export onnx` first")
print("| model | float32 file | int8 file | test ppl (PyTorch float32) | test ppl (ONNX int8) | change | greedy preset unchanged | shipped |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
total = 0
for name, r in onnx.items():
    total += r["bytes"]
    print(f"| {name} | {r['float32_bytes'] / 1e6:.2f} MB | {r['int8_bytes'] / 1e6:.2f} MB | "
          f"{r['test_perplexity_torch']:.3f} | {r['test_perplexity_onnx_int8']:.3f} | "
          f"{100 * r['int8_perplexity_change']:+.3f} % | {'yes' if r['greedy_unchanged_int8'] else 'no'} | "
          f"{r['encoding']} ({r['bytes'] / 1e6:.2f} MB) |")
vocab = path.parent / "vocab.json"
extra = vocab.stat().st_size if vocab.is_file() else 0
print(f"\nshipped models: {total / 1e6:.2f} MB; with vocab.json: {(total + extra) / 1e6:.2f} MB")
worst = max(max(r["max_abs_logit_diff_float32"], r["max_abs_logit_diff_int8_vs_rounded_torch"]) for r in onnx.values())
print(f"largest |logit difference| onnxruntime vs PyTorch on 64 test windows: {worst:.2e}")
