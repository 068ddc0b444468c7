"""Tokenizer rules and the lesson's toy vocabulary, computed by the code."""

import pytest

from export.windows import context_window, make_windows
from export.wordlm import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIAL_TOKENS,
    UNK_ID,
    Vocabulary,
    build_vocabulary,
    detokenize,
    tokenize,
)

SENTENCE = "Lily found a red ball."


@pytest.fixture
def toy():
    pieces = tokenize(SENTENCE)
    return pieces, Vocabulary(list(SPECIAL_TOKENS) + sorted(set(pieces)))


def test_special_tokens_have_ids_0_to_3():
    assert SPECIAL_TOKENS == ("<PAD>", "<BOS>", "<EOS>", "<UNK>")
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)


def test_toy_vocabulary_has_ten_items(toy):
    pieces, vocab = toy
    assert pieces == ["lily", "found", "a", "red", "ball", "."]
    assert len(vocab) == 10


def test_blue_is_unknown(toy):
    _, vocab = toy
    assert vocab.encode_tokens(["blue"], boundaries=False) == [3]
    assert vocab.encode_tokens(["blue"], boundaries=True) == [1, 3, 2]


def test_sentence_becomes_eight_ids_with_red_at_position_4(toy):
    pieces, vocab = toy
    ids = vocab.encode_tokens(pieces, boundaries=True)
    assert len(ids) == 8
    assert ids[4] == vocab.stoi["red"] == 9
    assert ids[0] == BOS_ID and ids[-1] == EOS_ID


def test_window_of_four_at_t1_reads_bos_and_predicts_lily(toy):
    pieces, vocab = toy
    ids = vocab.encode_tokens(pieces, boundaries=True)
    assert context_window(ids[:1], 4) == [0, 0, 0, 1]
    assert ids[1] == vocab.stoi["lily"] == 8
    windows = make_windows([ids], 4)
    x, y = windows.all()
    assert x[0].tolist() == [0, 0, 0, 1] and y[0].item() == 8
    assert len(windows) == len(pieces) + 1 == 7  # every token once, plus EOS
    assert y[-1].item() == EOS_ID


def test_decode_round_trips_ids(toy):
    pieces, vocab = toy
    ids = vocab.encode_tokens(pieces)
    assert vocab.decode(ids) == ["<BOS>", *pieces, "<EOS>"]
    assert vocab.decode(ids, skip_special=True) == pieces
    assert detokenize(pieces) == "lily found a red ball."


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Lily can't find 12 balls!", ["lily", "can't", "find", "12", "balls", "!"]),
        ("Lily’s hat", ["lily's", "hat"]),  # curly apostrophe joins like a straight one
        ("“Hi,” she said.", ['"', "hi", ",", '"', "she", "said", "."]),
        ("‘Go’ now", ["'", "go", "'", "now"]),  # quotes around a word stay separate
        ("dogs' toys", ["dogs", "'", "toys"]),  # no letter after it: not inside a word
        ("wait – no—yes", ["wait", "–", "no", "—", "yes"]),  # dashes are their own tokens
        ("Hello…", ["hello", ".", ".", "."]),  # NFKC turns the ellipsis into three dots
        ("ＬＩＬＹ", ["lily"]),  # NFKC folds full-width letters
        ("café", ["café"]),
        ("a\u200db", ["ab"]),  # format characters vanish without splitting
        ("tab\tand\nnewline", ["tab", "and", "newline"]),
        ("👍🏽!", ["👍", "🏽", "!"]),
        ("", []),
        ("   \n ", []),
    ],
)
def test_tokenizer_rules(text, expected):
    assert tokenize(text) == expected


def test_vocabulary_ranks_by_frequency_then_alphabet():
    vocab, counts = build_vocabulary([["b", "a", "c", "c"], ["a", "d"]], size=7)
    assert vocab.itos == [*SPECIAL_TOKENS, "a", "c", "b"]  # a and c twice (a first), then b before d
    assert counts["d"] == 1


def test_vocabulary_rejects_bad_layouts():
    with pytest.raises(ValueError):
        Vocabulary(["x", "<BOS>", "<EOS>", "<UNK>"])
    with pytest.raises(ValueError):
        Vocabulary([*SPECIAL_TOKENS, "a", "a"])
