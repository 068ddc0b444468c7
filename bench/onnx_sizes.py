"""Print the ONNX weight-encoding comparison recorded in wasm_assets/evidence.json.

`python -m export onnx` tries weight encodings smallest first and ships the
first one whose greedy preset continuation is unchanged and whose test
perplexity moves by less than 0.5 % (float32 if none). This prints every
candidate it measured.
"""

import json
import sys
from pathlib import Path

path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "wasm_assets/evidence.json")
evidence = json.loads(path.read_text())
onnx = evidence.get("onnx")
if not onnx:
    sys.exit(f"{path} has no 'onnx' section: run `python -m export onnx` first")
print("| model | encoding | file | test ppl | change vs PyTorch float32 | greedy preset unchanged | accepted |")
print("| --- | --- | ---: | ---: | ---: | --- | --- |")
total = 0
for name, r in onnx.items():
    total += r["bytes"]
    print(
        f"| {name} | float32 (reference) | {r['float32_bytes'] / 1e6:.2f} MB | {r['test_perplexity_torch']:.3f} | "
        f"onnxruntime {r['test_perplexity_onnx_float32']:.3f} | yes | fallback |"
    )
    for label, t in r["tried"].items():
        print(
            f"| {name} | {label} | {t['bytes'] / 1e6:.2f} MB | {t['test_perplexity']:.3f} | "
            f"{100 * t['perplexity_change']:+.3f} % | {'yes' if t['greedy_unchanged'] else 'no'} | "
            f"{'yes' if t['accepted'] else 'no'} |"
        )
print()
for name, r in onnx.items():
    print(f"{name}: ships {r['encoding']}, {r['bytes'] / 1e6:.2f} MB")
vocab = path.parent / "vocab.json"
extra = vocab.stat().st_size if vocab.is_file() else 0
print(f"shipped models: {total / 1e6:.2f} MB; with vocab.json: {(total + extra) / 1e6:.2f} MB")
worst = max(
    max([r["max_abs_logit_diff_float32"]] + [t["max_abs_logit_diff"] for t in r["tried"].values()])
    for r in onnx.values()
)
print(f"largest |logit difference| onnxruntime vs the matching PyTorch model on 64 test windows: {worst:.2e}")
