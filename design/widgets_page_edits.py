"""Re-apply the widgets branch's page edits to rewritten lesson pages (a merge helper; not published).

The widgets branch (issue 23 sections 2 and 4) touches the lesson pages in three small, mechanical ways.
When a merge with the rewritten prose conflicts in docs/lesson/*.md, take the prose side of every page
and run ``python design/widgets_page_edits.py``: it puts

* each widget's div at its storyboard slot (``<!-- slot: query-keys -->`` etc.), once;
* ``hint="..."`` into every ``quiz(...)`` call it knows by its question (an unknown question is listed:
  write its hint by hand; tests/test_quiz_second_try_browser.py fails until every question has one);
* ``::figure:: traces`` in place of page 5's matplotlib ``validation_traces.svg`` image.

(Page 5's 40.21/40.22 note is the prose's own: the knock-outs run the shipped int8 copy.)

Running it twice changes nothing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

LESSON = Path(__file__).resolve().parents[1] / "docs" / "lesson"

WIDGETS = {
    "1-why-more-heads.md": (
        "query-keys",
        "query_keys",
        'data-head="1" data-sources="1,5,6,7"',
        "Drag the query or a key and watch the dot products and the weights: the key that points most "
        "the query's way takes the largest share.",
        "This picture of one query and four keys runs in your browser and needs JavaScript; it is loading&hellip;",
    ),
    "2-multihead-operation.md": (
        "predict-check",
        "predict_check",
        'data-head="1" data-receiver="1" data-source="0"',
        "Before the tables of the next steps, predict four of their cells yourself, for receiver 1 "
        "in head 1: a score, a weight, a message coordinate and an output coordinate, each checked "
        "as you type it.",
        "This exercise runs in your browser and needs JavaScript; it is loading&hellip;",
    ),
    "3-training-examples.md": (
        "tokenizer-playground",
        "token_playground",
        "",
        "Try it with your own sentence: see it as words, subwords and characters, find the words the "
        "models do not know (UNK), and move the window width from 2 to 8 while you watch the count "
        "of targets.",
        "This playground runs in your browser and needs JavaScript; it is loading&hellip;",
    ),
}

HINTS = {
    "Can one head's single set": "Think about how many numbers the softmax gives one receiver in one head: one per what?",
    "which token is the receiver when": "A receiver has to be a token that is already in the input and has a row of its own.",
    "Does training tell one head": "Ask what the training loss knows about heads: does it ever mention a job?",
    "how many numbers are in one head's message": "A message is a weighted sum of value rows, so it is as wide as one head's value row.",
    "Why is the weight of receiver 2 on source 6": "Compare the positions: which one comes first in the sentence, and what may a receiver not read?",
    "What does the residual step add": "A residual connection adds something back to what the layer started from.",
    "-token story fed to the model as one input": "Think about how many tokens of a story are targets, and how large the model's input is.",
    "A model reads a window of four tokens": "A window counts whatever the tokenizer produces; ask what a tokenizer may produce besides words.",
    "If a story contains three sentences": "Ask what BOS and EOS mark: the edges of a sentence or of a document?",
    "does *w* = 8 give more targets than *w* = 4": "Every target is one token of the sentence to predict; does the window width change how many there are?",
    "Have the token IDs in X become embeddings yet": "Ask which step of the model first looks up the embedding table.",
    "which sources may the query at": "The causal mask blocks only two kinds of slot: later ones and padding.",
    "EOS is never an input in our windows": "A row of the table affects the loss only if the model looked it up.",
    "During generation, the model picks the next token with a softmax": "Look at what the cross-entropy loss function takes as its input.",
    "A model has a test perplexity of 4": "Perplexity comes from the probabilities given to the true tokens; accuracy only counts the top choice.",
    "Four heads' mean perplexity is lower, but the gap": "Ask what another draw of seeds could do to a gap smaller than the spread.",
    "the MLP's training loss kept falling while its validation loss rose": "Which stories stand in for text the model has never seen, without touching the test stories?",
    "Why do we report test perplexity from the checkpoint chosen": "Ask what would happen to a measurement if it were also used to make the choice.",
    "which head of the four-head model, switched off alone": "A head matters most where many windows lean on it for the clue that decides the top choice.",
}

CALL = re.compile(r"\{%-?\s*call quiz\((?P<args>.*?)\)\s*-?%\}", re.S)
TRACES_IMG = re.compile(
    r'(<figure class="mha-figure">\s*)?<img src="\.\./\.\./wasm_assets/validation_traces\.svg"[^>]*>'
    r"(\s*<figcaption>.*?</figcaption>\s*</figure>)?",
    re.S,
)


def add_widget(text: str, page: str) -> str:
    slot, widget, attrs, lead, fallback = WIDGETS[page]
    if f'data-mha-widget="{widget}"' in text:
        return text
    marker = re.search(rf"<!-- slot: {re.escape(slot)}\b.*?-->\n", text)
    if not marker:
        sys.exit(f"{page}: no <!-- slot: {slot} --> marker; place the {widget} div by hand")
    block = (
        f'{lead}\n\n<div class="mha-widget" data-mha-widget="{widget}"{" " + attrs if attrs else ""} markdown>\n'
        f'<p class="mha-noscript">{fallback}</p>\n</div>\n\n'
    )
    return text[: marker.end()] + block + text[marker.end() :]


def add_hints(text: str, page: str, unknown: list[str]) -> str:
    def one(m: re.Match) -> str:
        args = m.group("args")
        if re.search(r"\bhint\s*=", args):
            return m.group(0)
        hint = next((h for key, h in HINTS.items() if key in args), None)
        if hint is None:
            unknown.append(f"{page}: {args[:90]!r}")
            return m.group(0)
        return m.group(0).replace(args, args.rstrip() + f',\n             hint="{hint}"', 1)

    return CALL.sub(one, text)


def main() -> int:
    unknown: list[str] = []
    for page in sorted(p.name for p in LESSON.glob("*.md")):
        path = LESSON / page
        text = path.read_text()
        new = add_hints(text, page, unknown)
        if page in WIDGETS:
            new = add_widget(new, page)
        if page.startswith("5-"):
            new = TRACES_IMG.sub("::figure:: traces", new)
        if new != text:
            path.write_text(new)
            print(f"edited {path.relative_to(LESSON.parents[1])}")
    for line in unknown:
        print(f"no hint known for {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
