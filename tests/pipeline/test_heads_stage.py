"""The heads stage: knock-out perplexities and the head atlas (export/heads.py), and page 5's section built from them."""

from __future__ import annotations

import html
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import torch

from export.evidence import validate
from export.generate import prompt_history
from export.heads import KINDS, atlas_svg, knockout_masks
from export.onnx_export import load_compact
from export.windows import context_window
from export.wordlm import tokenize

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "wasm_assets"


@pytest.fixture(scope="module")
def evidence():
    return json.loads((ASSETS / "evidence.json").read_text())


@pytest.fixture(scope="module")
def heads(evidence):
    if "heads" not in evidence:
        pytest.skip("evidence.json has no heads section: run `python -m export heads`")
    return evidence["heads"]


def test_evidence_embeds_the_stage_artefact_and_the_figure_is_drawn_from_it(evidence, heads):
    validate(evidence)
    assert json.loads((ASSETS / "heads.json").read_text()) == heads
    assert evidence["artefacts"]["heads"] == "heads.json"
    assert (ASSETS / heads["figure"]).read_text() == atlas_svg(heads)
    assert heads["windows"] == evidence["audit"]["test"]["windows"]
    for name in ("one_head", "four_heads"):
        sha = heads["checkpoints"][name]["sha256"]
        import hashlib

        assert hashlib.sha256((ASSETS / "checkpoints" / f"{name}-seed11.pt").read_bytes()).hexdigest() == sha


def test_knockout_table_is_consistent(evidence, heads):
    ko = heads["knockout"]
    assert list(ko) == list(knockout_masks(4))
    assert ko["all"]["test_perplexity"] == pytest.approx(
        evidence["onnx"]["four_heads"]["test_perplexity_shipped"], rel=1e-5
    )
    assert ko["all"]["top_token_changed"] == 0
    for row in ko.values():
        assert row["test_perplexity"] == pytest.approx(math.exp(row["test_loss"]), rel=1e-12)
        assert row["perplexity_change"] == pytest.approx(row["test_perplexity"] / ko["all"]["test_perplexity"] - 1)
        assert 0 <= row["top_token_changed"] <= 1
    # Switching heads off never helps this model here: a measured fact, checked so a regeneration that breaks it is seen.
    assert all(row["test_perplexity"] > ko["all"]["test_perplexity"] for name, row in ko.items() if name != "all")


def test_atlas_shares_are_proportions_and_offsets_add_up(heads):
    offsets = [k for k in KINDS if k.startswith("offset_")]
    for model_atlas in heads["atlas"].values():
        assert sum(model_atlas["uniform"][k] for k in offsets) == pytest.approx(1, abs=1e-9)
        for head in model_atlas["heads"]:
            assert set(head["share"]) == set(KINDS)
            assert all(0 <= v <= 1 for v in head["share"].values())
            assert sum(head["share"][k] for k in offsets) == pytest.approx(1, abs=1e-6)  # PAD gets nothing
            assert head["signature"] == head["ranked_kinds"][0]


def test_clearest_windows_rebuild_from_their_prompts(heads, load_asset):
    """The compare page gets only the prompt: it must rebuild exactly the test window, and the share must be real."""
    itos = load_asset("vocab.json")["itos"]
    for name, model_atlas in heads["atlas"].items():
        model = load_compact(ASSETS / "checkpoints" / f"{name}-seed11.pt")
        for head in model_atlas["heads"]:
            c = head["clearest"]
            window = context_window(prompt_history(itos, c["prompt"]), 64)
            assert [itos[i] for i in window if i != 0] == c["tokens"]
            words = c["tokens"][1:] if c["tokens"][0] == "<BOS>" else c["tokens"]
            assert tokenize(c["prompt"])[-len(words) :] == words
            with torch.no_grad():
                _, A = model(torch.tensor([window]), return_attention=True)
            weights = A[0, head["head"] - 1].numpy()
            assert float(weights.max()) == pytest.approx(c["top_sources"][0]["weight"], abs=1e-5)


@pytest.mark.slow
def test_knockout_recomputed_from_the_data(heads, evidence):
    """The full model and the costliest knock-out, recomputed on the whole test split."""
    from export.corpus import corpus_of_evidence
    from export.heads import knockout

    torch.set_num_threads(1)
    test = corpus_of_evidence(evidence).windows["test"]
    model = load_compact(ASSETS / "checkpoints" / "four_heads-seed11.pt")
    again = knockout(model, test)
    for name, row in heads["knockout"].items():
        assert again[name]["test_perplexity"] == pytest.approx(row["test_perplexity"], rel=1e-6), name
        assert again[name]["top_token_changed"] == pytest.approx(row["top_token_changed"], abs=2 / len(test)), name


def test_heads_refuses_another_data_file_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "evidence.json").write_text((ASSETS / "evidence.json").read_text())
    data = tmp_path / "stories.txt"
    data.write_text("Tom had a ball.\n<|endoftext|>\nLily saw a cat.\n<|endoftext|>\nA dog ran.\n<|endoftext|>\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "export",
            "heads",
            "--data",
            str(data),
            "--out",
            str(out),
            "--checkpoints",
            str(ASSETS / "checkpoints"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "differs from the one evidence.json was made from" in lines[0], proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["evidence.json"]


# --------------------------------------------------------------------------- page 5


@pytest.fixture(scope="module")
def results_page(built_site):
    return (built_site / "lesson/5-results/index.html").read_text()


@pytest.fixture(scope="module")
def appendix_page(built_site):
    """How the numbers were measured: the atlas, its table and its links moved here from page 5."""
    return (built_site / "lesson/how-measured/index.html").read_text()


def test_page5_knockout_table_and_atlas_come_from_the_evidence(results_page, appendix_page, heads):
    section = results_page[results_page.index('id="what-each-head-does"') :]
    for name in heads["knockout"]:
        assert f'data-ev="heads.knockout.{name}.test_perplexity"' in section, name
    assert "how-measured/#atlas" in section  # page 5 links the atlas where it now lives
    section = appendix_page[appendix_page.index('id="atlas"') :]
    for name, model_atlas in heads["atlas"].items():
        for i, _ in enumerate(model_atlas["heads"]):
            for kind in KINDS:
                assert f'data-ev="heads.atlas.{name}.heads.{i}.share.{kind}"' in section
    # the atlas is the figures hook's themed SVG, described in words (its <desc>) and by the table
    # (attribute order is free: inside a door md_in_html writes the figure's attributes again)
    desc = re.search(
        r'<figure [^>]*id="fig-head-atlas"[^>]*>.*?<desc id="fig-head-atlas-desc">([^<]+)</desc>', section, re.S
    )
    assert desc and len(desc.group(1)) > 80
    assert "<figcaption>" in section and "The atlas as a table" in section
    assert "tendencies" in section and "not jobs anyone gave the heads" in section


def test_page5_links_open_each_heads_clearest_window(appendix_page, heads):
    links = [html.unescape(h) for h in re.findall(r'href="(\.\./\.\./compare/\?[^"]+)"', appendix_page)]
    wanted = {(name, h["head"], h["clearest"]["prompt"]) for name, a in heads["atlas"].items() for h in a["heads"]}
    got = set()
    for link in links:
        q = parse_qs(urlsplit(link).query)
        got.add((q["inspect"][0], int(q["head"][0]), q["prompt"][0]))
    assert wanted <= got


def test_page5_quiz_uses_the_knockout(results_page, heads):
    """The knock-out question reasons from the table: the head whose removal costs least, its numbers from the evidence."""
    quiz = results_page[results_page.index("costs the least") :]
    quiz = quiz[: quiz.index("</details>")]
    ko = heads["knockout"]
    least = min(range(1, 5), key=lambda h: ko[f"without_{h}"]["test_perplexity"])
    assert f"Switched off alone, head {least} costs the least" in results_page
    assert f'data-ev="heads.knockout.only_{least}.test_perplexity"' in quiz
    assert f'data-ev="heads.knockout.without_{least}.perplexity_change"' in quiz


def test_one_head_palette_across_the_site(heads):
    """Head k has one colour everywhere: the CSS of the figures and widgets, the atlas and the inspector."""
    import re as _re

    from export.heads import SITE_HEAD_PALETTE, head_colours

    css = (Path(__file__).resolve().parents[2] / "wasm_assets/palette.css").read_text()
    light = css[: css.index("slate")]  # the first block holds the light scheme's values
    found = [_re.search(rf"--mha-head-{k}:\s*(#[0-9a-fA-F]{{6}})", light).group(1).lower() for k in range(1, 5)]
    assert found == list(SITE_HEAD_PALETTE)
    assert heads["colours"] == head_colours()
    atlas = (Path(__file__).resolve().parents[2] / "wasm_assets/head_atlas.svg").read_text().lower()
    assert all(c in atlas for c in SITE_HEAD_PALETTE)
