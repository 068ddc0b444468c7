"""Page 1's sentence comes from a search with the trained four-head model, so its two heads visibly differ.

``export/lesson/example_search.py`` writes ``wasm_assets/example_search.json``: every
candidate sentence of a small grammar, each scored by how clearly two heads of the
shipped four-head model read different earlier words, and the chosen one. The page says
it was chosen from N candidates and how typical that is; these tests keep the file honest.
"""

from __future__ import annotations

import json

import pytest

from export.artefacts import Artefacts
from export.lesson import example_search
from tests.tolerance import FLOAT32_REL


@pytest.fixture(scope="module")
def stored():
    path = Artefacts().example_search
    if not path.is_file():
        pytest.skip(f"{path} not written yet: run python -m export.lesson.example_search")
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_candidate_is_in_the_vocabulary(stored):
    itos = set(json.loads(Artefacts().vocab.read_text(encoding="utf-8"))["itos"])
    texts = example_search.candidates()
    assert stored["n_candidates"] == len(texts) == len(stored["candidates"])
    from export.wordlm import tokenize

    missing = {w for t in texts for w in tokenize(t) if w not in itos}
    assert not missing, f"candidate words outside vocab.json: {sorted(missing)}"


def test_the_chosen_sentence_is_the_best_scored_and_two_heads_differ(stored):
    # Among the candidates whose guess changes when some one head is switched off.
    eligible = [c for c in stored["candidates"] if c.get("guess_changed_without")]
    assert len(eligible) == stored["n_guess_changes"] > 0
    best = max(eligible, key=lambda c: c["score"])
    chosen = stored["chosen"]
    assert chosen["text"] == best["text"] and chosen["guess_changed_without"]
    a, b = chosen["heads"]
    fav = chosen["favourites"]
    assert fav[a - 1] != fav[b - 1], "the two heads of the chosen pair must read different words"
    for h in (a, b):
        j = chosen["tokens"].index(fav[h - 1])
        assert chosen["weights"][h - 1][j] >= chosen["score"] - 1e-6
    for row in chosen["weights"]:
        assert abs(sum(row) - 1) < 1e-4
    assert 0 <= stored["share_clear"] <= 1 and stored["n_clear"] == round(
        stored["share_clear"] * stored["n_candidates"]
    )
    assert stored["n_sharp"] == sum(c["score"] >= stored["sharp_threshold"] for c in stored["candidates"])


def test_the_typical_threshold_separates_the_candidates(stored):
    """A "typical" claim needs a threshold that some candidates miss: neither (almost) all nor (almost) none."""
    assert 0.1 <= stored["share_sharp"] <= 0.9


def test_switching_one_head_off_changes_the_chosen_guess():
    """The criterion, recomputed with the shipped model: some head's knock-out moves the most probable word."""
    assets = Artefacts()
    if not assets.model_onnx(example_search.MODEL).is_file() or not assets.example_search.is_file():
        pytest.skip("the ONNX models or the search result are not written yet")
    from export.lesson.running_sentence import read
    from export.models import most_heads_model

    stored = json.loads(assets.example_search.read_text(encoding="utf-8"))
    vocab = json.loads(assets.vocab.read_text(encoding="utf-8"))
    out = read(
        assets.model_onnx(example_search.MODEL).read_bytes(),
        vocab["itos"],
        vocab["T"],
        stored["sentence"],
        most_heads_model().heads,
    )
    assert out["guess"] == stored["chosen"]["guess"]
    assert [w["head"] for w in out["without"] if w["changed"]] == stored["chosen"]["guess_changed_without"]


def test_a_fresh_search_gives_the_stored_result(stored, tmp_path):
    assets = Artefacts()
    if not assets.model_onnx(example_search.MODEL).is_file():
        pytest.skip("the ONNX models are not written yet")
    fresh = example_search.search(assets)
    assert fresh["chosen"]["text"] == stored["chosen"]["text"]
    assert fresh["n_candidates"] == stored["n_candidates"] and fresh["n_clear"] == stored["n_clear"]
    assert fresh["n_guess_changes"] == stored["n_guess_changes"] and fresh["n_sharp"] == stored["n_sharp"]
    # Scores are float32 attention weights from onnxruntime: equal within the project's float32 tolerance.
    assert fresh["chosen"]["score"] == pytest.approx(stored["chosen"]["score"], rel=FLOAT32_REL)


def test_split_score_sets_bos_and_the_receiver_aside():
    import numpy as np

    words = ["<BOS>", "he", "saw", "a", "hat"]
    # head 2: saw
    w = np.array(
        [
            [0.9, 0.05, 0.0, 0.0, 0.05],  # head 1 mostly on BOS; favourite earlier word: he
            [0.0, 0.0, 0.7, 0.0, 0.3],
        ]
    )
    out = example_search.split_score(w, words)
    assert out["favourites"] == ["he", "saw"] and out["heads"] == [1, 2]
    assert out["score"] == pytest.approx(0.05)


def test_every_sentence_the_pages_run_through_a_model_is_in_the_vocabulary():
    """Page 1's sentence, page 4's batch and page 5's preset prompt: no word the model reads as UNK."""
    from export.wordlm import tokenize

    assets = Artefacts()
    for path in (assets.example_search, assets.walkthrough, assets.evidence):
        if not path.is_file():
            pytest.skip(f"{path} not written yet")
    itos = set(json.loads(assets.vocab.read_text(encoding="utf-8"))["itos"])
    walkthrough = json.loads(assets.walkthrough.read_text(encoding="utf-8"))
    evidence = json.loads(assets.evidence.read_text(encoding="utf-8"))
    sentences = {
        "page 1": json.loads(assets.example_search.read_text(encoding="utf-8"))["chosen"]["text"],
        "page 5 preset": evidence["preset"]["prompt"],
        **{
            f"page 4 row {i}": " ".join(t for t in row["prefix"] if t != "<BOS>")
            for i, row in enumerate(walkthrough["rows"])
        },
    }
    for where, text in sentences.items():
        unknown = [w for w in tokenize(text) if w not in itos]
        assert not unknown, f"{where}: {text!r} has words outside the vocabulary: {unknown}"
