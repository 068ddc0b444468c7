// Counts the words a learner sees in a lesson page's article with every door closed.
// Used by tests/test_lesson_word_budget_browser.py: evaluate this function in the page.
// Counted: every rendered text node of the article (prose, headings, captions, tables,
// quiz questions and options, text widgets wrote, figure labels drawn as SVG text).
// Not counted: code listings (.mha-code with its source line, and any <pre>: the listing rule covers them), the text inside a
// closed <details> (a door: only its summary shows), SVG <title>/<desc> (read by screen
// readers only), permalink signs and anything not rendered (display:none, hidden).
() => {
  const article = document.querySelector("article.md-content__inner") || document.querySelector("article");
  const words = { total: 0, svg: 0, prose: 0 };
  const closedDoor = (el) => {
    for (let e = el; e && e !== article; e = e.parentElement) {
      const door = e.parentElement && e.parentElement.closest("details");
      if (e.tagName === "SUMMARY") return false;
      if (e.tagName === "DETAILS" && !e.open && e !== el) return true;
      if (door && !door.open && !e.closest("summary")) return true;
    }
    return false;
  };
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest("pre, .mha-code, script, style, title, desc, .headerlink, .md-source-file")) continue;
    if (closedDoor(el)) continue;
    const svg = el.closest("svg");
    if (!svg && !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    if (svg && !svg.checkVisibility({ checkVisibilityCSS: true })) continue;
    const parts = node.textContent.split(/\s+/);
    const n = parts.filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
    words.lettered = (words.lettered || 0) + parts.filter((w) => /\p{L}/u.test(w)).length;
    words.total += n;
    if (svg) words.svg += n; else words.prose += n;
  }
  const listings = [...article.querySelectorAll(".mha-code")];
  words.listings_open = listings.filter((l) => !closedDoor(l) && l.checkVisibility()).length;
  words.listings = listings.length;
  return words;
}
