"""The browser runtime's pure modules (rng, tokenizer, generation choice) under Node.

These run the very ES modules the site ships, without a browser, against the
Python reference in ``export/``. The same checks run again in Chromium in
``test_site_browser.py``.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from export.generate import Mulberry32, choose_next
from export.wordlm import tokenize

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "site_src/js/runtime"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")


def run_node(script: str, payload) -> object:
    program = f"""
import {{ readFileSync }} from "node:fs";
const payload = JSON.parse(readFileSync(0, "utf8"));
const rt = (name) => import("{RUNTIME.as_uri()}/" + name);
const result = await (async () => {{ {script} }})();
process.stdout.write(JSON.stringify(result));
"""
    proc = subprocess.run([NODE, "--input-type=module", "-e", program], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_mulberry32_matches_python():
    seeds = [0, 1, 11, 29, 47, 123456789, 2**32 - 1, 2**32 + 5, -1, -12345]
    expected = {str(s): [Mulberry32(s).random() for _ in range(1)] for s in seeds}
    for s in seeds:
        g = Mulberry32(s)
        expected[str(s)] = [g.random() for _ in range(50)]
    got = run_node("""
      const { Mulberry32 } = await rt("rng.js");
      const out = {};
      for (const s of payload) { const g = new Mulberry32(s); out[String(s)] = Array.from({length: 50}, () => g.random()); }
      return out;""", seeds)
    assert got == expected


def test_choose_next_matches_python():
    rs = np.random.default_rng(3)
    cases = []
    for k in range(12):
        logits = (rs.standard_normal(400) * (1 + k)).astype(np.float32)
        if k == 5:
            logits[1] = 100  # BOS is never chosen
        cases.append({"logits": logits.tolist(), "temperature": [0, 0.5, 1.0, 1.7][k % 4], "seed": 100 + k})
    expected = []
    for c in cases:
        rng = Mulberry32(c["seed"]) if c["temperature"] > 0 else None
        expected.append([choose_next(np.array(c["logits"], dtype=np.float32), c["temperature"], rng) for _ in range(20)])
    got = run_node("""
      const { chooseNext } = await rt("generate.js");
      const { Mulberry32 } = await rt("rng.js");
      return payload.map((c) => {
        const rng = c.temperature > 0 ? new Mulberry32(c.seed) : null;
        const logits = Float32Array.from(c.logits);
        return Array.from({length: 20}, () => chooseNext(logits, c.temperature, rng));
      });""", cases)
    assert got == expected


def test_context_window_and_options():
    got = run_node("""
      const g = await rt("generate.js");
      const errors = [];
      for (const opts of [{maxNewTokens: 0}, {maxNewTokens: 65}, {maxNewTokens: 2.5}, {temperature: -1}, {seed: 1.5}]) {
        try { g.checkOptions(opts); errors.push(null); } catch (e) { errors.push(e.name); }
      }
      return { short: g.contextWindow([1, 5, 6], 5), long: g.contextWindow([1,2,3,4,5,6,7], 4), errors,
               ok: g.checkOptions({maxNewTokens: 64}).maxNewTokens };""", None)
    assert got["short"] == [0, 0, 1, 5, 6]
    assert got["long"] == [4, 5, 6, 7]
    assert got["errors"] == ["RangeError"] * 5
    assert got["ok"] == 64


EXTRA_TEXTS = [
    "Lily can't find 12 balls!", "“Hello,” said Tom’s mom.", "a\u200bb\tc\x00d", "café ÉCOLE ﬁne ①",
    "ΟΔΟΣ Σίσυφος", "'quoted' words'", "emoji 🦉🦉 here", "שלום עולם", "İstanbul STRASSE", "a--b — c – d",
    "x\u2028y\u3000z\x85w", "\x1cfoo\x1fbar", "don't'", "''a'b'c''", "<script>alert(1)</script>", "x\ufeffy",
    "٣ apples ², ½", "Ⅻ o'clock", "e\u0301te", "tab\u00a0nbsp",
]


def test_tokenizer_matches_python_in_node(assets_dir):
    texts = list(EXTRA_TEXTS)
    vectors = assets_dir / "tokenizer_vectors.json"
    if vectors.is_file():
        texts += [c["text"] for c in json.loads(vectors.read_text())["cases"]]
    got = run_node("""
      const { tokenize } = await rt("tokenizer.js");
      return payload.map((t) => tokenize(t));""", texts)
    mismatches = [(t, g, tokenize(t)) for t, g in zip(texts, got) if g != tokenize(t)]
    assert not mismatches, mismatches[:5]
