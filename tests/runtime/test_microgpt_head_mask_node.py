"""The page's JavaScript microgpt with heads knocked out or probed equals the Python microgpt.

``site_src/js/microgpt/model.js`` (run here under Node, the very module the
page ships) and ``export/microgpt/floats.py`` compute the next-letter
probabilities of a name with every head setting the microgpt page offers: all
four heads, each subset of them knocked out (a head's numbers replaced by 0s
before attn_wo), and the one-head probe (one head over all 16 numbers on the
four-head weights). They agree within float64 tolerance; a knocked-out head
really changes the numbers. The one-head model trained for the comparison
(``microgpt-one-head.json``) runs through the same code.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from export.artefacts import Artefacts
from export.microgpt import floats
from tests.tolerance import FLOAT64_REL

ROOT = Path(__file__).resolve().parents[2]
MODEL_JS = ROOT / "site_src/js/microgpt/model.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")
NAMES = ("emma", "kristopher", "zoe")
MASKS = [list(m) for m in itertools.product([True, False], repeat=4)]


def _js(script: str, payload) -> object:
    program = f"""
import {{ readFileSync }} from "node:fs";
const mg = await import("{MODEL_JS.as_uri()}");
const payload = JSON.parse(readFileSync(0, "utf8"));
const model = JSON.parse(readFileSync(payload.path, "utf8"));
const result = (() => {{ {script} }})();
process.stdout.write(JSON.stringify(result));
"""
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", program],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _close(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x) == len(y)
        for p, q in zip(x, y):
            assert math.isclose(p, q, rel_tol=FLOAT64_REL, abs_tol=1e-15), (p, q)


@pytest.fixture(scope="module")
def four():
    return floats.load_trained(Artefacts().microgpt_trained)


def test_head_masks_and_probe_match_python(four):
    got = _js(
        """
      const out = {};
      for (const name of payload.names) {
        out[name] = {
          masks: payload.masks.map((headMask) => mg.nextLetterProbs(model, name, { headMask })),
          probe: mg.nextLetterProbs(model, name, { probe: true }),
          plain: mg.nextLetterProbs(model, name),
        };
      }
      return out;""",
        {"path": str(Artefacts().microgpt_trained), "names": NAMES, "masks": MASKS},
    )
    w, u = four["weights"], four["uchars"]
    for name in NAMES:
        plain = floats.forward_attention(w, u, name)["probs"]
        _close(got[name]["plain"], plain)
        _close(got[name]["masks"][0], plain)  # all heads on: the model itself
        for mask, probs in zip(MASKS, got[name]["masks"]):
            _close(probs, floats.forward_attention(w, u, name, head_mask=mask)["probs"])
        _close(got[name]["probe"], floats.forward_attention(w, u, name, probe=True)["probs"])
        # Each switch has a consequence: knocking out any one head moves the last prediction.
        for h in range(4):
            alone_off = MASKS.index([k != h for k in range(4)])
            assert max(abs(a - b) for a, b in zip(got[name]["masks"][alone_off][-1], plain[-1])) > 1e-3
        assert max(abs(a - b) for a, b in zip(got[name]["probe"][-1], plain[-1])) > 1e-3


def test_probe_is_one_head_over_all_numbers(four):
    """The probe's weights are the Watch view's one-head weights, and its blend covers all 16 numbers."""
    w = four["weights"]
    run = floats.forward_attention(w, four["uchars"], "emma")
    for pos in range(len(run["q"])):
        out, weights = floats.probe_one_head(run["q"][pos], run["keys"][: pos + 1], run["values"][: pos + 1])
        assert weights == run["single_head_weights"][pos]
        assert len(out) == 16


def test_a_bad_mask_is_refused(four):
    with pytest.raises(ValueError, match="one entry per head"):
        floats.forward_attention(four["weights"], four["uchars"], "emma", head_mask=[True, False])
    got = _js(
        """
      try { mg.nextLetterProbs(model, "emma", { headMask: [true] }); return "no error"; }
      catch (err) { return err.message; }""",
        {"path": str(Artefacts().microgpt_trained)},
    )
    assert "one entry per head" in got


def test_the_one_head_model_runs_in_the_page_code():
    path = Artefacts().microgpt_one_head
    one = floats.load_trained(path)
    assert one["config"]["n_head"] == 1 and one["config"]["head_dim"] == 16
    got = _js(
        """return { probs: mg.nextLetterProbs(model, "emma"),
                       names: mg.sampleNames(model, { n: 5, temperature: 0.5, seed: 42 }) };""",
        {"path": str(path)},
    )
    _close(got["probs"], floats.forward_attention(one["weights"], one["uchars"], "emma", n_head=1)["probs"])
    assert got["names"] == floats.sample_names(one["weights"], one["uchars"], 5, 0.5, 42, n_head=1)
