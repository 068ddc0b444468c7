"""Page 3's tokenizer and windows playground agrees with the Python pipeline.

For a few typed sentences (one with words outside the vocabulary), the page's
word tokens and ids equal export.wordlm's, its BPE pieces equal Hugging Face
tokenizers' on the shipped bpe_tokenizer.json, its characters equal
export.lesson.subwords.three_ways', and for every window width the slider
offers (2 ... 8, moved with the keyboard) its (context, target) pairs equal
export.windows.make_windows', pair by pair; the count of targets is the same
for every width.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGE = "lesson/3-training-examples/"
SENTENCES = ["She wore a red wool hooded coat and smiled.", 'Lily found a big, shiny ball! "Can we play?" she asked.']


def _python(text, vocab_json, bpe):
    from export.lesson.subwords import three_ways
    from export.windows import make_windows
    from export.wordlm import Vocabulary, tokenize

    vocab = Vocabulary(vocab_json["itos"])
    words = tokenize(text)
    ids = vocab.encode_tokens(words, boundaries=False)
    out = {
        "words": words,
        "ids": ids,
        "subwords": three_ways(text, bpe)["subwords"],
        "characters": three_ways(text, bpe)["characters"],
        "pairs": {},
    }
    for w in range(2, 9):
        x, y = make_windows([vocab.encode_tokens(words)], w).all()
        out["pairs"][w] = [f"{' '.join(map(str, row))} > {t}" for row, t in zip(x.tolist(), y.tolist())]
    return out


def _page(page):
    return page.evaluate("""() => {
      const root = document.querySelector('[data-mha-widget=token_playground]');
      const chips = (kind) => [...root.querySelectorAll(`.mha-tp__row[data-kind=${kind}] .mha-tp__chip`)]
        .map((li) => li.firstChild.textContent);
      return {
        words: chips('words'), subwords: chips('subwords'),
        characters: chips('characters').map((c) => c === '\\u2423' ? ' ' : c),
        ids: [...root.querySelectorAll('.mha-tp__chips--ids .mha-tp__chip')].map((li) => Number(li.firstChild.textContent)),
        unk: root.querySelectorAll('.mha-tp__chips--ids .is-unk').length,
        pairs: [...root.querySelectorAll('.mha-tp__table tbody tr')].map((tr) => tr.dataset.ids),
        targets: Number(root.dataset.targets),
        w: root.querySelector('.mha-tp__w').textContent,
      };
    }""")


def test_page_and_python_agree_on_tokens_ids_and_pairs(make_page, base_url, load_asset, assets_dir):
    from export.lesson.subwords import load_bpe

    if not (assets_dir / "bpe_tokenizer.json").is_file():
        pytest.skip("bpe_tokenizer.json not written yet: python -m export.lesson.subwords")
    bpe = load_bpe(assets_dir / "bpe_tokenizer.json")
    vocab = load_asset("vocab.json")
    page, watch = make_page(viewport={"width": 390, "height": 844})
    page.goto(base_url + PAGE)
    root = page.locator("[data-mha-widget=token_playground][data-ready=true]")
    root.wait_for()
    field, slider = root.locator(".mha-tp__input"), root.locator(".mha-tp__slider")
    for text in SENTENCES:
        want = _python(text, vocab, bpe)
        field.fill(text)
        slider.focus()
        page.keyboard.press("Home")  # w = 2
        for w in range(2, 9):
            got = _page(page)
            assert got["w"] == f"w = {w}"
            assert got["words"] == want["words"] and got["ids"] == want["ids"]
            assert got["subwords"] == want["subwords"]
            assert got["characters"] == want["characters"]
            assert got["unk"] == want["ids"].count(vocab["special"]["UNK"])
            assert got["pairs"] == want["pairs"][w], (text, w)
            assert got["targets"] == len(want["words"]) + 1
            page.keyboard.press("ArrowRight")
    assert _page(page)["w"] == "w = 8"  # the slider stops at 8
    assert _python(SENTENCES[0], vocab, bpe)["ids"].count(vocab["special"]["UNK"]) == 2  # wool, hooded
    watch.check()
