// Lists what a lesson page holds, for tests/browser/lesson/test_doors_and_inventory.py:
// its figures, tables, quizzes and widgets (the inventory), and its doors in reading order.
//
// A door is anything hidden until a click: a <details> (a quiz's own "Show the answer"
// excepted) or a set of tabs. Between two doors there must be main-line content: a
// block outside every door that shows at least one word or is a figure, table or widget.
() => {
  const article = document.querySelector("article.md-content__inner") || document.querySelector("article");
  const text = (n) => (n ? n.textContent.replace(/\s+/g, " ").trim() : "");
  const items = [];
  for (const f of article.querySelectorAll("figure[id]")) items.push(`figure ${f.id}`);
  for (const w of article.querySelectorAll("[data-mha-widget]")) {
    const kind = w.dataset.mhaWidget;
    if (kind === "quiz") continue;
    items.push(`widget ${kind}${w.dataset.show ? " " + w.dataset.show : ""}`);
  }
  for (const q of article.querySelectorAll(".mha-quiz__question")) items.push(`quiz ${text(q).slice(0, 70)}`);
  for (const t of article.querySelectorAll("table")) {
    if (t.closest(".highlighttable, [data-mha-widget], figure, pre")) continue;
    const cap = t.querySelector("caption");
    const head = [...(t.querySelector("tr")?.children || [])].map(text).join(" | ");
    items.push(`table ${(cap ? text(cap) : head).slice(0, 70)}`);
  }
  const isDoor = (n) =>
    (n.tagName === "DETAILS" && !n.classList.contains("mha-quiz__explanation")) || n.classList.contains("tabbed-set");
  const doors = [...article.querySelectorAll("details, .tabbed-set")]
    .filter(isDoor)
    .filter((d) => !d.parentElement.closest("details, .tabbed-set"));
  // reading order: the article's blocks, a door or main-line content each
  const sequence = [];
  const walk = (node) => {
    for (const child of node.children) {
      if (isDoor(child)) {
        sequence.push({ door: text(child.querySelector("summary")) || "tabs" });
        continue;
      }
      if (child.querySelector("details, .tabbed-set") && !child.matches("[data-mha-widget], figure, table")) {
        walk(child);
        continue;
      }
      if (/^H[1-6]$/.test(child.tagName) || child.classList.contains("mha-time")) continue;
      const shows = /\p{L}/u.test(text(child)) || child.matches("figure, table, [data-mha-widget], svg");
      if (shows && child.checkVisibility()) sequence.push({ content: text(child).slice(0, 40) });
    }
  };
  walk(article);
  const links = [...article.querySelectorAll("a[href]")].map((a) => a.getAttribute("href"));
  return { items, doors: doors.map((d) => text(d.querySelector("summary")) || "tabs"), sequence, links };
};
