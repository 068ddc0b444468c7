"""Page 5's interpretation: the derived figures and the claims its text makes about them.

``export/lesson/results.py`` turns evidence.json into the figures page 5
explains (overfitting, parameters per part, attention cost, data budget,
repetition in the saved continuations). These tests re-derive them a second
way, and check that what the page *says* about them still holds for the
evidence it is built from: if the models are retrained and, say, the
one-head model stops looping, the sentence saying that it loops must change.
"""

from __future__ import annotations

import json
import re

import pytest

from export.lesson import results


@pytest.fixture(scope="module")
def evidence(load_asset):
    return load_asset("evidence.json")


@pytest.fixture(scope="module")
def derived(evidence):
    return results.compute(evidence)


def test_parameter_parts_equal_the_real_modules(evidence, derived):
    """Count the parts on the real torch modules, not with the formula."""
    import torch  # noqa: F401
    from export.mlp import MLPLM
    from export.multihead import MultiHeadAttentionLM

    C, T = evidence["vocabulary"]["C"], evidence["vocabulary"]["T"]
    d, hidden = evidence["protocol"]["d_model"], evidence["protocol"]["hidden"]
    groups = {
        "token_embedding": "token_table",
        "position_embedding": "position_table",
        "W_Q": "attention",
        "W_K": "attention",
        "W_V": "attention",
        "W_O": "attention",
        "hidden_layer": "hidden",
        "vocab_head": "vocab_head",
    }
    for model in evidence["protocol"]["models"]:
        module = (
            MLPLM(C, T, d, hidden)
            if model == "mlp"
            else MultiHeadAttentionLM(C, T, d, hidden, evidence["protocol"]["heads"][model])
        )
        counted: dict[str, int] = {}
        for name, p in module.named_parameters():
            part = groups[name.split(".")[0]]
            counted[part] = counted.get(part, 0) + p.numel()
        got = {k: v["count"] for k, v in derived["parameters"][model]["parts"].items()}
        assert got == counted, model
        assert sum(counted.values()) == evidence["aggregates"][model]["parameters"]
        assert sum(v["share"] for v in derived["parameters"][model]["parts"].values()) == pytest.approx(1, abs=1e-12)


def test_a_wrong_architecture_is_refused(evidence):
    bad = json.loads(json.dumps(evidence))
    bad["aggregates"]["one_head"]["parameters"] += 1
    with pytest.raises(ValueError, match="one_head: the parts add up to"):
        results.parameters(bad)


def test_attention_cost_matches_counting_the_products(derived):
    """Count multiply-adds by walking the loops of Q K^T and A V for a small window."""
    cost = derived["attention_cost"]
    d = cost["d"]
    for row in cost["rows"][:2]:
        w = row["window"]
        for model, h in cost["heads"].items():
            dh = d // h
            scores = sum(dh for _i in range(w) for _j in range(w))
            messages = sum(dh for _i in range(w) for _j in range(w))
            assert row["per_head"][model] == scores + messages
            assert row["per_head"][model] * h == row["scores_and_messages_total"]
            assert row["weights_total"][model] == h * w * w
    shares = [r["attention_share"] for r in cost["rows"]]
    assert shares == sorted(shares)  # attention's share grows with the window
    at_break_even = [r for r in cost["rows"] if r["window"] == cost["break_even_window"]]
    assert at_break_even and at_break_even[0]["attention_share"] == pytest.approx(0.5, abs=1e-12)
    assert cost["rows"][cost["model_row"]]["window"] == cost["T"]


def test_overfitting_figures_come_from_the_traces(evidence, derived):
    for model, o in derived["overfitting"].items():
        runs = [r for r in evidence["runs"] if r["model"] == model]
        for r in runs:  # the chosen update is the trace's minimum
            assert min(r["trace"], key=lambda p: p[1])[0] == r["best_update"]
        assert o["last_val_mean"] == pytest.approx(sum(r["trace"][-1][1] for r in runs) / len(runs), abs=1e-12)


def test_what_page5_says_still_holds(evidence, derived):
    """Each claim in the page's prose, against the evidence the page is built from."""
    o, c = derived["overfitting"], derived["continuations"]["models"]
    # "The MLP's best checkpoint came early and validation loss then climbed; the attention models peaked late."
    assert o["mlp"]["best_update_max"] < o["one_head"]["best_update_min"]
    assert o["mlp"]["best_update_max"] < o["four_heads"]["best_update_min"]
    assert o["mlp"]["rise_mean"] > 10 * max(o["one_head"]["rise_mean"], o["four_heads"]["rise_mean"])
    assert o["mlp"]["final_train_mean"] < o["mlp"]["best_val_mean"]  # training loss kept falling below
    # "They too fit their training stories better": a positive gap at the end.
    assert o["one_head"]["gap_at_end_mean"] > 0 and o["four_heads"]["gap_at_end_mean"] > 0
    # "each training window was seen about N times", "the MLP has more parameters per training token"
    assert derived["data"]["passes"] > 1
    ppt = derived["data"]["parameters_per_train_token"]
    assert ppt["mlp"] > ppt["one_head"] == ppt["four_heads"]
    # Continuations: all begin with "he"; one head loops; four heads do not; the MLP switches to "she".
    assert {m["first_token"] for m in c.values()} == {"he"}
    assert c["one_head"]["top_ngram_count"] >= 3
    assert c["four_heads"]["top_ngram_count"] == 1
    assert c["mlp"]["pronouns"]["he"] >= 1 and c["mlp"]["pronouns"]["she"] >= 1
    assert c["four_heads"]["distinct_share"] > c["one_head"]["distinct_share"]
    assert "radio" not in evidence["preset"]["continuations"]["four_heads"]["tokens"]  # "forgets the radio"
    # "the real story goes on with It"
    story = evidence["stories"]["shortest_test"]
    assert story["row"] == evidence["preset"]["row"]
    rest = story["text"][len(evidence["preset"]["prompt"]) :].split()
    assert rest[0] == "It"


def test_page5_states_device_and_note_cleanly(built_site):
    # page 5 and its appendix, where the protocol's fine print lives
    text = re.sub(
        r"<[^>]+>",
        "",
        "".join((built_site / f"lesson/{page}/index.html").read_text() for page in ("5-results", "how-measured")),
    )
    text = re.sub(r"\s+", " ", text)
    assert "1 threads" not in text
    assert re.search(r"Conditions during training: [^.]*\.", text), "the timing note ends with a full stop"
    for heading in (
        "The MLP overfits, and what choosing on validation did",
        "Less data than planned",
        "Where the parameters are",
        "What attention costs as the window grows",
        "What the saved continuations show",
    ):
        assert heading in text


def test_a_story_cut_by_the_data_file_says_so(built_site, evidence):
    """The appendix quotes page 3's longest stories; one the source file cuts mid-sentence is marked as cut."""
    page = (built_site / "lesson/how-measured/index.html").read_text()  # the stories' fine print, from page 3
    quotes = re.findall(r'<blockquote class="mha-story">(.*?)</blockquote>', page, re.S)
    by_row = {int(re.search(r'data-ev="stories\.[\w.]+\.row">(\d+)<', q).group(1)): q for q in quotes}
    for story in [evidence["stories"]["excerpt"], evidence["stories"]["shortest_test"], *evidence["stories"]["long"]]:
        if story["row"] not in by_row:
            continue
        cut = not story["text"].rstrip().rstrip("\"\u201d')").endswith((".", "!", "?"))
        assert ("mha-story__cut" in by_row[story["row"]]) == cut, story["row"]
    assert evidence["stories"]["long"][0]["row"] in by_row
