"""Check every sentence of a rendered page that compares two models against its paired interval.

Independent of ``export/paired.py`` on purpose: the intervals are recomputed
here from the per-seed test perplexities the evidence holds (its ``runs`` and
``paired.extra_runs``; the sweep's ``models[].runs`` and ``extra_runs``), with
Student's t from scipy, and a claim is what the page says, read from its words.

A comparing sentence is worded inside ``<span class="mha-claim"
data-claim="PATH">`` (PATH: ``<section>.<source|all>.<model>``). ``problems``
also looks for sentences that compare two head counts outside such a span
(two head counts and a comparing word in one sentence): each is a problem,
since nothing ties its words to an interval.
"""

from __future__ import annotations

import math
import re
import statistics
from html.parser import HTMLParser

from scipy.stats import t as student_t

SECTIONS = ("paired", "head_sweep.findings.paired")
COUNT = r"(?:one|two|four|eight|sixteen|1|2|4|8|16)[ -]heads?"
COMPARING = re.compile(
    r"\b(behind|ahead|trails?|beat|beats|better|worse|outperform\w*|separated|"
    r"beyond the spread|lower|higher)\b",
    re.I,
)
NUMBER = {"one": "1", "two": "2", "four": "4", "eight": "8", "sixteen": "16"}
# Each outcome's words, and words that would claim another outcome.
WORDS = {
    "behind": re.compile(r"\b(?:is|are) behind\b"),
    "ahead": re.compile(r"\b(?:is|are) ahead of\b"),
    "not_separated": re.compile(r"\bnot separated\b"),
}


def _runs(evidence: dict, section: str) -> tuple[list[dict], list[int], str]:
    if section == "paired":
        return (
            evidence["runs"] + evidence["paired"]["extra_runs"],
            evidence["protocol"]["seeds"],
            evidence["paired"]["reference"],
        )
    sweep = evidence["head_sweep"]
    runs = [r for m in sweep["models"] for r in m["runs"] + m.get("extra_runs", [])]
    return runs, sweep["seeds"], sweep["findings"]["paired"]["reference"]


def interval(evidence: dict, path: str) -> dict:
    """The paired comparison at ``path`` recomputed from the per-seed perplexities."""
    section, which, model = path.rsplit(".", 2)
    runs, source_seeds, ref = _runs(evidence, section)
    ppl = {}
    for r in runs:
        if which == "all" or r["seed"] in source_seeds:
            ppl.setdefault(r["model"], {})[r["seed"]] = r["test_perplexity"]
    seeds = sorted(set(ppl.get(model, {})) & set(ppl.get(ref, {})))
    diffs = [ppl[model][s] - ppl[ref][s] for s in seeds]
    out = {
        "n": len(diffs),
        "mean": statistics.fmean(diffs) if diffs else None,
        "low": None,
        "high": None,
        "outcome": "not_separated",
    }
    if len(diffs) >= 2:
        half = student_t.ppf(0.975, len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
        out.update(low=out["mean"] - half, high=out["mean"] + half)
        out["outcome"] = "behind" if out["low"] > 0 else "ahead" if out["high"] < 0 else "not_separated"
    return out


class _Claims(HTMLParser):
    """Text of every mha-claim span (nested spans included), and the page's text with each claim as ⟦k⟧.

    Quizzes are left out of the page text: their options are suppositions and wrong answers on purpose.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.claims: list[dict] = []
        self.text: list[str] = []
        self._depth = 0  # span nesting inside the current claim
        self._quiz = 0  # div nesting inside a quiz
        self._svg = False
        self.descs: list[str] = []  # figures' text alternatives

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self._svg = True
        if self._svg:
            if tag == "desc":
                self.descs.append("")
            return
        if self._quiz:
            self._quiz += tag == "div"
            return
        if tag == "div" and "mha-quiz" in (a.get("class") or "").split():
            self._quiz = 1
            return
        if self._depth:
            self._depth += tag == "span"
        elif tag == "span" and "mha-claim" in (a.get("class") or "").split():
            self._depth = 1
            self.claims.append({"path": a.get("data-claim"), "outcome": a.get("data-outcome"), "text": ""})
            self.text.append(f"⟦{len(self.claims) - 1}⟧")
        elif tag in ("p", "li", "td", "th", "h1", "h2", "h3", "figcaption", "summary", "br"):
            self.text.append("\n")

    def handle_endtag(self, tag):
        if tag == "svg":
            self._svg = False
        if self._svg:
            return
        if self._quiz:
            self._quiz -= tag == "div"
            return
        if self._depth and tag == "span":
            self._depth -= 1

    def handle_data(self, data):
        if self._svg:
            if self.lasttag == "desc" and self.descs:
                self.descs[-1] += data
            return
        if self._quiz:
            return
        if self._depth:
            self.claims[-1]["text"] += data
        else:
            self.text.append(data)


def _number(x: float) -> str:
    return f"{x:+.2f}"


def problems(html: str, evidence: dict) -> list[str]:
    """Every claim that does not follow its recomputed interval, and every comparing sentence outside a claim."""
    parser = _Claims()
    parser.feed(html)
    out = []
    for c in parser.claims:
        said = re.sub(r"\s+", " ", c["text"]).strip()
        try:
            want = interval(evidence, c["path"])
        except KeyError as exc:
            out.append(f"{c['path']}: no such comparison in the evidence ({exc})")
            continue
        if c["outcome"] != want["outcome"]:
            out.append(f"{c['path']}: marked {c['outcome']}, the per-seed perplexities give {want['outcome']}: {said}")
        for outcome, words in WORDS.items():
            if bool(words.search(said)) != (outcome == want["outcome"]):
                out.append(f"{c['path']}: the words do not say {want['outcome']}: {said}")
                break
        if f"over {want['n']} seeds" not in said and f"share {want['n']} seed" not in said:
            out.append(f"{c['path']}: does not say n = {want['n']}: {said}")
        for key in ("mean", "low", "high"):
            if want[key] is not None and _number(want[key]).lstrip("+") not in said.replace("−", "-"):
                out.append(f"{c['path']}: {key} {_number(want[key])} is not in: {said}")
    out += _figure_problems(parser.descs, evidence)
    text = re.sub(r"[ \t]+", " ", "".join(parser.text))
    for block in text.split("\n"):
        for sentence in re.split(r"(?<=[.!?])\s+", block):
            counts = {
                NUMBER.get(w, w)
                for w in (m.lower().split()[0].split("-")[0] for m in re.findall(COUNT, sentence, re.I))
            }
            if len(counts) >= 2 and COMPARING.search(sentence) and "⟦" not in sentence:
                out.append(f"a sentence compares head counts without an interval: {sentence.strip()}")
    return out


# The sweep figure's text alternative: "2 heads minus 4 heads, seed by seed: ...; mean +1.01, 95 % interval
# -0.65 to +2.67 over 3 seeds: not separated"
FIGURE_CLAIM = re.compile(
    r"(\d+) heads? minus (\d+) heads?, seed by seed: [^;]*; mean ([+-][0-9.]+), "
    r"(?:95 % interval ([+-][0-9.]+) to ([+-][0-9.]+)|no interval) over (\d+) seeds: "
    r"(behind|ahead|not separated)"
)


def _figure_problems(descs: list[str], evidence: dict) -> list[str]:
    out = []
    heads = {str(m["heads"]): m["name"] for m in evidence.get("head_sweep", {}).get("models", [])}
    for desc in descs:
        for sentence in re.split(r";\s+(?=\d+ heads? )", desc):
            counts = set(re.findall(r"(\d+) heads?\b", sentence))
            if len(counts) < 2 or not COMPARING.search(sentence):
                continue
            m = FIGURE_CLAIM.search(sentence)
            if not m:
                out.append(f"a figure's text compares head counts without an interval: {sentence}")
                continue
            want = interval(evidence, f"head_sweep.findings.paired.all.{heads[m.group(1)]}")
            said = m.group(7).replace(" ", "_")
            if said != want["outcome"] or int(m.group(6)) != want["n"] or m.group(3) != _number(want["mean"]):
                out.append(
                    f"the figure says {m.group(0)!r}; the per-seed perplexities give {want['outcome']}, "
                    f"mean {_number(want['mean'])} over {want['n']} seeds"
                )
            elif want["low"] is not None and (m.group(4), m.group(5)) != (_number(want["low"]), _number(want["high"])):
                out.append(f"the figure's interval {m.group(4)} to {m.group(5)} is not the recomputed one")
    return out
