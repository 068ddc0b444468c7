"""Python and the browser tokenizer agree on every code point, whatever their Unicode versions.

Python 3.11 knows Unicode 14; Node and browsers know newer versions. Both sides
drop the code points Python's tables do not assign (the browser reads them
from ``unicode_unassigned.js``), so every one of the 1,114,112 code points,
alone and between two letters, gives the same tokens.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from export.wordlm import UNICODE_TABLE, UNICODE_VERSION, tokenize, unicode_table_js

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = (ROOT / "site_src/js/runtime/tokenizer.js").as_uri()
NODE = shutil.which("node")
SEP, PAIR = "\u0001", "\u0002"
ALL = range(0x110000)


def test_the_browser_table_is_this_pythons_unicode():
    assert (ROOT / UNICODE_TABLE).read_text() == unicode_table_js(), (
        "unicode_unassigned.js is out of date: run `python -m export unicode`"
    )
    assert UNICODE_VERSION == unicodedata.unidata_version


def python_side(texts_of) -> list[str]:
    return [PAIR.join(SEP.join(tokenize(t)) for t in texts_of(chr(cp))) for cp in ALL]


NODE_SWEEP = r"""
const { tokenize } = await import(process.argv[1]);
const contexts = JSON.parse(process.argv[2]);
const out = [];
for (let cp = 0; cp < 0x110000; cp++) {
  const c = String.fromCodePoint(cp);
  out.push(contexts.map(([a, b]) => tokenize(a + c + b).join("\u0001")).join("\u0002"));
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")
def test_every_code_point_alone_and_between_letters_tokenizes_the_same():
    contexts = [["", ""], ["a", "b"]]
    expected = python_side(lambda c: [a + c + b for a, b in contexts])
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", NODE_SWEEP, TOKENIZER, json.dumps(contexts)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert len(got) == len(expected) == 0x110000
    differ = [cp for cp in ALL if got[cp] != expected[cp]]
    assert not differ, f"{len(differ)} code points differ, first {[hex(c) for c in differ[:10]]}"


@pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")
def test_characters_newer_than_python_neither_join_nor_split_their_neighbours():
    # U+1FAE8 (shaking face) and U+1E4D0 (Nag Mundari) are Unicode 15; Python 3.11 does not know them.
    texts = [
        "Lily saw a \U0001fae8 and smiled.",
        "e\U0001fae8\u0301",
        "ΑΣ\U0001e4d0Β",
        "don\U0001fae8't",
        "a\U0001e4d0b",
        "\U0001fae8",
    ]
    proc = subprocess.run(
        [
            NODE,
            "--input-type=module",
            "-e",
            "const { tokenize } = await import(process.argv[1]);"
            "process.stdout.write(JSON.stringify(JSON.parse(process.argv[2]).map(tokenize)));",
            TOKENIZER,
            json.dumps(texts),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [tokenize(t) for t in texts]
    assert tokenize(texts[0]) == ["lily", "saw", "a", "and", "smiled", "."]


@pytest.mark.skipif(NODE is None, reason="node is not installed (make setup needs it for npm ci)")
def test_a_vocabulary_from_another_unicode_version_is_refused():
    script = (
        "const { Vocabulary } = await import(process.argv[1]);"
        "const itos = ['<PAD>', '<BOS>', '<EOS>', '<UNK>', 'lily'];"
        "const base = { itos, T: 8, special: { PAD: 0, BOS: 1, EOS: 2, UNK: 3 } };"
        "new Vocabulary({ ...base, unicode_version: process.argv[2] });"
        "try { new Vocabulary({ ...base, unicode_version: '99.0.0' }); process.stdout.write('accepted'); }"
        "catch (e) { process.stdout.write(e.message); }"
    )
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", script, TOKENIZER, UNICODE_VERSION],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Unicode 99.0.0" in proc.stdout and UNICODE_VERSION in proc.stdout
