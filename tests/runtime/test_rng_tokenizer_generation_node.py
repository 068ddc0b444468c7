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

from export.generate import EXCLUDED_IDS, Mulberry32, choose_next, generate_ids
from export.wordlm import BOS_ID, EOS_ID, PAD_ID, UNK_ID, tokenize

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "site_src/js/runtime"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")
SPECIAL = {"PAD": PAD_ID, "BOS": BOS_ID, "EOS": EOS_ID, "UNK": UNK_ID}


def run_node(script: str, payload) -> object:
    program = f"""
import {{ readFileSync }} from "node:fs";
const payload = JSON.parse(readFileSync(0, "utf8"));
const rt = (name) => import("{RUNTIME.as_uri()}/" + name);
const result = await (async () => {{ {script} }})();
process.stdout.write(JSON.stringify(result));
"""
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", program],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_mulberry32_matches_python():
    seeds = [0, 1, 11, 29, 47, 123456789, 2**32 - 1, 2**32 + 5, -1, -12345]
    expected = {str(s): [Mulberry32(s).random() for _ in range(1)] for s in seeds}
    for s in seeds:
        g = Mulberry32(s)
        expected[str(s)] = [g.random() for _ in range(50)]
    got = run_node(
        """
      const { Mulberry32 } = await rt("rng.js");
      const out = {};
      for (const s of payload) { const g = new Mulberry32(s); out[String(s)] = Array.from({length: 50}, () => g.random()); }
      return out;""",
        seeds,
    )
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
        expected.append(
            [choose_next(np.array(c["logits"], dtype=np.float32), c["temperature"], rng) for _ in range(20)]
        )
    got = run_node(
        """
      const { chooseNext } = await rt("generate.js");
      const { Mulberry32 } = await rt("rng.js");
      const excluded = payload.excluded;  // the manifest's generation.excluded_ids
      return payload.cases.map((c) => {
        const rng = c.temperature > 0 ? new Mulberry32(c.seed) : null;
        const logits = Float32Array.from(c.logits);
        return Array.from({length: 20}, () => chooseNext(logits, c.temperature, rng, excluded));
      });""",
        {"cases": cases, "special": SPECIAL, "excluded": sorted(EXCLUDED_IDS)},
    )
    assert got == expected


def test_context_window_and_options():
    got = run_node(
        """
      const g = await rt("generate.js");
      const c = await rt("context.js");
      const errors = [];
      for (const opts of [{maxNewTokens: 0}, {maxNewTokens: 65}, {maxNewTokens: 2.5}, {maxNewTokens: 3, temperature: -1},
                          {maxNewTokens: 3, seed: 1.5}]) {
        try { g.checkOptions(opts, 64); errors.push(null); } catch (e) { errors.push(e.name); }
      }
      return { short: c.contextWindow([1, 5, 6], 5, 0), long: c.contextWindow([1,2,3,4,5,6,7], 4, 0), errors,
               noLimit: (() => { try { g.checkOptions({maxNewTokens: 3}); return null; } catch (e) { return e.message; } })(),
               ok: g.checkOptions({maxNewTokens: 64}, 64).maxNewTokens, padded: c.contextWindow([9], 3, 7) };""",
        None,
    )
    assert got["padded"] == [7, 7, 9]  # the pad id is the vocabulary's, not a constant
    assert "manifest" in got["noLimit"]  # the limit is the manifest's, never a constant of the browser's
    assert got["short"] == [0, 0, 1, 5, 6]
    assert got["long"] == [4, 5, 6, 7]
    assert got["errors"] == ["RangeError"] * 5
    assert got["ok"] == 64


EXTRA_TEXTS = [
    "Lily can't find 12 balls!",
    "“Hello,” said Tom’s mom.",
    "a\u200bb\tc\x00d",
    "café ÉCOLE ﬁne ①",
    "ΟΔΟΣ Σίσυφος",
    "'quoted' words'",
    "emoji 🦉🦉 here",
    "שלום עולם",
    "İstanbul STRASSE",
    "a--b — c – d",
    "x\u2028y\u3000z\x85w",
    "\x1cfoo\x1fbar",
    "don't'",
    "''a'b'c''",
    "<script>alert(1)</script>",
    "x\ufeffy",
    "٣ apples ², ½",
    "Ⅻ o'clock",
    "e\u0301te",
    "tab\u00a0nbsp",
]


def test_tokenizer_matches_python_in_node(assets_dir):
    texts = list(EXTRA_TEXTS)
    vectors = assets_dir / "tokenizer_vectors.json"
    if vectors.is_file():
        texts += [c["text"] for c in json.loads(vectors.read_text())["cases"]]
    got = run_node(
        """
      const { tokenize } = await rt("tokenizer.js");
      return payload.map((t) => tokenize(t));""",
        texts,
    )
    mismatches = [(t, g, tokenize(t)) for t, g in zip(texts, got) if g != tokenize(t)]
    assert not mismatches, mismatches[:5]


def _toy_model(C: int, T: int):
    """A deterministic stand-in for a model: logits from a fixed table, indexed by the window's last ids."""
    table = np.random.default_rng(7).standard_normal((C, C)).astype(np.float32) * 3
    table[:, EOS_ID] += 1.5  # EOS comes often enough that some runs end early and some reach the limit

    def predict(window):
        w = np.asarray(window).reshape(-1)
        return table[w[-1]] + 0.5 * table[w[-2]]

    return table, predict


@pytest.mark.parametrize("temperature,seed", [(0, 0), (0.8, 5), (1.3, 123456), (2.0, 2**32 + 9)])
def test_generation_loop_matches_python_step_for_step(temperature, seed):
    """runtime/generate.js's Generation (the page's and the test hook's loop) against export.generate.generate_ids."""
    C, T, limit = 50, 6, 40
    table, predict = _toy_model(C, T)
    starts = [[BOS_ID], [BOS_ID, 7, 8, 9, 10, 11, 12, 13], [BOS_ID, 20]]
    want = [generate_ids(predict, h, limit, temperature, seed, T) for h in starts]
    got = run_node(
        """
      const { Generation, generateIds } = await rt("generate.js");
      const table = payload.table;
      const run = async (w) => { const a = table[w[w.length - 1]], b = table[w[w.length - 2]];
        return { logits: Float32Array.from(a, (x, i) => Math.fround(x + Math.fround(0.5 * b[i]))) }; };
      const out = [];
      for (const history of payload.starts) {
        const options = { maxNewTokens: payload.limit, temperature: payload.temperature, seed: payload.seed,
                          T: payload.T, special: payload.special, limit: payload.limit, excluded: payload.excluded };
        const whole = await generateIds(run, history, options);
        const g = new Generation(history, options);
        const windows = [];
        while (!g.done) windows.push((await g.step(run)).window);
        out.push({ ids: whole.ids, eos: whole.endedWithEos, stepIds: g.ids, windows });
      }
      return out;""",
        {
            "table": table.tolist(),
            "starts": starts,
            "limit": limit,
            "temperature": temperature,
            "seed": seed,
            "T": T,
            "special": SPECIAL,
            "excluded": sorted(EXCLUDED_IDS),
        },
    )
    from export.windows import context_window

    for history, (ids, ended), g in zip(starts, want, got):
        assert g["ids"] == ids and g["eos"] == ended, (history, g["ids"], ids)
        assert g["stepIds"] == ids
        full = list(history) + ids
        assert g["windows"] == [context_window(full[: len(history) + k], T) for k in range(len(g["windows"]))]


COMPARE = ROOT / "site_src/js/compare"


def test_compare_settings_messages():
    """The compare page's field checks (compare/options.js): numbers or a capitalised message per field."""
    cases = {
        "ok": {"tokens": "24", "temperature": "0.7", "seed": "4294967295"},
        "huge_seed": {"tokens": "24", "temperature": "0", "seed": "12345678901234567890"},
        "exp_seed": {"tokens": "24", "temperature": "0", "seed": "1e30"},
        "neg_seed": {"tokens": "24", "temperature": "0", "seed": "-3"},
        "frac_seed": {"tokens": "24", "temperature": "0", "seed": "2.5"},
        "hot": {"tokens": "24", "temperature": "100", "seed": "1"},
        "unreadable": {"tokens": "24", "temperature": {"value": "", "badInput": True}, "seed": "1"},
        "empty_temp": {"tokens": "24", "temperature": "", "seed": "1"},
        "tokens_zero": {"tokens": "0", "temperature": "0", "seed": "1"},
        "tokens_frac": {"tokens": "2.5", "temperature": "0", "seed": "1"},
        # Typed as text, as the fields now keep them: no thousands comma, no hexadecimal.
        "comma_temp": {"tokens": "24", "temperature": "1,5", "seed": "1"},
        "comma_tokens": {"tokens": "1,5", "temperature": "0", "seed": "1"},
        "hex_tokens": {"tokens": "0x10", "temperature": "0", "seed": "1"},
        "hex_seed": {"tokens": "24", "temperature": "0", "seed": "0x10"},
    }
    got = run_node(
        f"""
      const {{ parseOptions }} = await import("{COMPARE.as_uri()}/options.js");
      const out = {{}};
      for (const [k, fields] of Object.entries(payload)) {{
        const f = Object.fromEntries(Object.entries(fields).map(([n, v]) => [n, typeof v === "string" ? {{ value: v }} : v]));
        out[k] = parseOptions(f, 64);
      }}
      return out;""",
        cases,
    )
    assert got["ok"] == {"options": {"maxNewTokens": 24, "temperature": 0.7, "seed": 4294967295}}
    expect = {
        "huge_seed": ("seed", "too large"),
        "exp_seed": ("seed", "out of range"),
        "neg_seed": ("seed", "out of range"),
        "frac_seed": ("seed", "whole number"),
        "hot": ("temperature", "from 0 to 5"),
        "unreadable": ("temperature", "must be a number"),
        "empty_temp": ("temperature", "must be a number"),
        "tokens_zero": ("tokens", "from 1 to 64"),
        "tokens_frac": ("tokens", "whole number"),
        "comma_temp": ("temperature", "not a comma"),
        "comma_tokens": ("tokens", "whole number"),
        "hex_tokens": ("tokens", "whole number"),
        "hex_seed": ("seed", "whole number"),
    }
    for case, (field, says) in expect.items():
        problems = got[case].get("problems", {})
        assert list(problems) == [field] and says in problems[field], (case, got[case])
        assert problems[field][0].isupper() and problems[field].endswith("."), problems[field]
