// Counts what a learner sees in a lesson page's article with every door closed.
// Evaluated in the page by tests/browser/lesson/test_word_budget.py.
//
// A word is a whitespace-separated run holding at least one letter ("0.41" and
// "[2, 64]" are numbers, not words; "W_O", "c0" and "UNK" are words).
// Counted: every rendered text node of the article: prose, headings, captions,
// table cells, quiz questions and options, the text widgets wrote, and figure
// labels drawn as SVG text.
// Not counted: code listings (.mha-code with its source line, any <pre>: the
// listing rule covers them), text inside a closed <details> (a door: only its
// summary shows), SVG <title>/<desc> (for screen readers), permalink signs, and
// anything not rendered (display:none, visibility:hidden).
() => {
  const article = document.querySelector("article.md-content__inner") || document.querySelector("article");
  const insideClosedDoor = (el) => {
    for (let e = el; e && e !== article; e = e.parentElement) {
      const door = e.parentElement;
      if (door && door.tagName === "DETAILS" && !door.open && e.tagName !== "SUMMARY") return true;
    }
    return false;
  };
  const out = { words: 0, numbers: 0, svg_words: 0 };
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest("pre, .mha-code, script, style, title, desc, .headerlink")) continue;
    if (insideClosedDoor(el)) continue;
    const svg = el.closest("svg");
    if (!(svg || el).checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    for (const run of node.textContent.split(/\s+/)) {
      if (/\p{L}/u.test(run)) {
        out.words += 1;
        if (svg) out.svg_words += 1;
      } else if (/\p{N}/u.test(run)) {
        out.numbers += 1;
      }
    }
  }
  const listings = [...article.querySelectorAll(".mha-code")];
  out.listings = listings.length;
  out.listings_open = listings.filter((l) => !insideClosedDoor(l) && l.checkVisibility()).length;
  out.marker_lines = listings
    .flatMap((l) =>
      [...l.querySelectorAll("pre")]
        .map((p) => p.textContent)
        .join("\n")
        .split("\n"),
    )
    .filter((line) => /^\s*# lesson\b/.test(line));
  out.time = (article.querySelector(".mha-time")?.textContent || "").trim();
  out.sections = [...article.querySelectorAll("h2")].map((h) => h.textContent.replace(/¶$/, "").trim());
  return out;
};
