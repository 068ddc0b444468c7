"""What the microgpt page needs from microgpt, in Python.

* ``exercise_cases(model)``: the inputs of ``multi_head`` at every position of
  a few names of the trained model, with microgpt's own answers (before and
  after ``attn_wo``, whose matrix comes along). The page computes the same
  cases itself from the trained model (``exerciseCases`` in
  site_src/js/microgpt/verdict.js; the browser tests hold the two equal), so
  no file the site serves holds the answers; the tests of the exercise's
  diagnosis use this twin under CPython.
* ``multi_head_line_range(path)``: the lines of microgpt.py between the two
  marker comments around multi-head attention, which the page highlights.
"""

from __future__ import annotations

from pathlib import Path

from . import floats

CASES_FORMAT = "microgpt-exercise-cases/1"
CASE_NAMES = ("emma", "kristopher", "olivia", "zoe")
# Relative tolerance of the comparison: any order of summation passes, a
# different computation does not (the smallest real mistake is off by > 1e-4).
TOLERANCE = 1e-9
MHA_BEGIN = "# --- multi-head attention begins ---"
MHA_END = "# --- multi-head attention ends ---"
SOURCE = Path(__file__).with_name("microgpt.py")


def exercise_cases(model, names=CASE_NAMES):
    """Every position of every name: inputs, microgpt's glued heads and attn_wo's output."""
    config = model["config"]
    cases = []
    for name in names:
        run = floats.forward_attention(
            model["weights"], model["uchars"], name, config["n_head"]
        )
        for pos, q in enumerate(run["q"]):
            cases.append(
                {
                    "name": name,
                    "pos": pos,
                    "q": q,
                    "keys": run["keys"][: pos + 1],
                    "values": run["values"][: pos + 1],
                    "expected": run["heads_out"][pos],
                    "after_wo": run["attn_out"][pos],
                }
            )
    return {
        "format": CASES_FORMAT,
        "n_head": config["n_head"],
        "head_dim": config["head_dim"],
        "tolerance": TOLERANCE,
        "names": list(names),
        "attn_wo": model["weights"]["layer0.attn_wo"],
        "cases": cases,
    }


def multi_head_line_range(path=SOURCE):
    """1-based (first, last) line numbers strictly between the two marker comments."""
    lines = [
        line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines()
    ]
    begin, end = lines.index(MHA_BEGIN) + 1, lines.index(MHA_END) + 1
    return begin + 1, end - 1
