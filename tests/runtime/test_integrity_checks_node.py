"""The integrity and shape checks of site_src/js/runtime/ under Node, against Python.

The pure-JS SHA-256 is what checks the models where crypto.subtle is missing
(plain HTTP under a host name); vocabProblem/manifestProblem refuse JSON files
of the wrong shape before a page uses them.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.runtime.test_rng_tokenizer_generation_node import NODE, run_node

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")


def test_pure_js_sha256_matches_hashlib(assets_dir):
    # Lengths around the 55/56/64-byte padding boundaries, and a real model file.
    lengths = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 100_003]
    blobs = [bytes((i * 7 + n) % 256 for i in range(n)) for n in lengths]
    model = assets_dir / "models" / "one_head.onnx"
    if model.is_file():
        blobs.append(model.read_bytes())
    got = run_node(
        """
      const { sha256HexJS } = await rt("sha256.js");
      return payload.map((hex) => sha256HexJS(Uint8Array.from(Buffer.from(hex, "hex"))));
    """,
        [b.hex() for b in blobs],
    )
    assert got == [hashlib.sha256(b).hexdigest() for b in blobs]


def test_shape_checks_accept_the_real_files_and_refuse_wrong_shapes(load_asset):
    vocab, manifest = load_asset("vocab.json"), load_asset("models/manifest.json")
    cases = {
        "vocab": vocab,
        "short": {**vocab, "itos": vocab["itos"][:100]},
        "numbers": {**vocab, "itos": list(range(len(vocab["itos"])))},
        "repeats": {**vocab, "itos": vocab["itos"][:-1] + [vocab["itos"][5]]},
        "list": vocab["itos"],
        "special": {**vocab, "special": {**vocab["special"], "UNK": len(vocab["itos"])}},
        "no_T": {k: v for k, v in vocab.items() if k != "T"},
        "no_BOS": {**vocab, "special": {k: v for k, v in vocab["special"].items() if k != "BOS"}},
    }
    bad_manifest = {**manifest, "models": [{**manifest["models"][0], "sha256": "abc"}]}
    got = run_node(
        """
      const { vocabProblem, manifestProblem } = await rt("assets.js");
      const out = {};
      for (const [name, json] of Object.entries(payload.vocab)) out[name] = vocabProblem(json);
      out.manifest = manifestProblem(payload.manifest);
      out.bad_manifest = manifestProblem(payload.bad_manifest);
      out.empty_manifest = manifestProblem({ models: [] });
      return out;
    """,
        {"vocab": cases, "manifest": manifest, "bad_manifest": bad_manifest},
    )
    assert got["vocab"] is None and got["manifest"] is None, got
    assert got["short"] == f"it lists 100 tokens but says the models have {vocab['C']}"
    assert got["numbers"] == "token 0 is not a non-empty string"
    assert got["repeats"] == "its token list repeats tokens"
    assert got["list"] == "it is not an object"
    assert got["special"] == "its special token UNK has an id outside the token list"
    assert got["no_T"] == "its context length T is missing or not a positive integer"  # the page types no default
    assert got["no_BOS"] == "its special token ids lack BOS"
    assert "SHA-256" in got["bad_manifest"] and got["empty_manifest"] == "it lists no models"
