// "Unlocked" on the microgpt page: microgpt.py (export/microgpt/microgpt.py, the
// whole model on one page) with line numbers, its multi-head attention lines
// highlighted (found by the two marker comments), and a count of the lines
// learned so far.
//
// Locked until solved: the lines the exercise asks the learner to write (the
// slices of every key and value, the blend, extend) are not in the page at all
// until the learner's check has passed or they asked for the solution; each
// shows as "✎ your line N goes here". Once unlocked they appear, marked ✎, and
// the learner's own version of each (from the code that passed) beside it.
//
// "Learned" means: every line up to the start of the multi-head block before
// the exercise is solved (the earlier lessons' material), and every line up
// to the end of the attention block once it is solved.
//
// Once Level 2 (the whole multi_head) has passed, the learner's whole
// function stands beside microgpt's multi-head lines, under the listing.
//
// The listing (all of microgpt.py, and the layout of the whole page it forces)
// is built when it comes near the viewport, or once the exercise's Python is
// ready (python_first.js): while Python starts, both cores of a small laptop
// are busy, and a reader at the top of the page does not see the listing yet.

import { siteUrl } from "../runtime/assets.js";
import { getProgress, level2, onProgress } from "./progress.js";
import { whenWanted } from "./python_first.js";
import { el } from "./ui.js";
import { claim, release } from "../runtime/widget.js";

export const SOURCE_PATH = "wasm_assets/microgpt.py";
const BEGIN = "# --- multi-head attention begins ---";
const END = "# --- multi-head attention ends ---";
const mounted = new Map();

export function findBlock(lines) {
  const begin = lines.findIndex((l) => l.trim() === BEGIN);
  const end = lines.findIndex((l) => l.trim() === END);
  if (begin < 0 || end <= begin) return null;
  return { beginMarker: begin + 1, endMarker: end + 1, first: begin + 2, last: end }; // 1-based
}

export function mount(root) {
  const state = claim(mounted, root, { off: null });
  if (!state) return;
  root.replaceChildren(el("p", { class: "mgpt-loading", text: "Loading microgpt.py…" }));
  const text = fetch(siteUrl(SOURCE_PATH)).then((r) => {
    if (!r.ok) throw new Error(`${SOURCE_PATH} is missing on this site (HTTP ${r.status})`);
    return r.text();
  });
  Promise.all([text, whenWanted(root)])
    .then(([source]) => {
      if (!state.disposed) build(root, source.replace(/\n$/, "").split("\n"), state);
    })
    .catch((err) => {
      root.replaceChildren(
        el("p", {
          class: "mha-panel mha-panel--error",
          role: "alert",
          text: `microgpt.py could not be loaded: ${err.message}`,
        }),
      );
    });
}

// The learner's whole multi_head (its def line and its indented body), or null.
export function learnerFunction(code) {
  if (typeof code !== "string") return null;
  const lines = code.split("\n");
  const begin = lines.findIndex((l) => /^def multi_head\(/.test(l));
  if (begin < 0) return null;
  let end = lines.findIndex((l, i) => i > begin && /^\S/.test(l));
  if (end < 0) end = lines.length;
  return lines.slice(begin, end).join("\n").replace(/\s+$/, "");
}

// Lines without the indentation they all share (microgpt's block sits two levels deep in its file).
function dedent(lines) {
  const depth = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
  return lines.map((l) => l.slice(depth)).join("\n");
}

// Level 2 passed: microgpt's lines and the learner's function, side by side (stacked on a phone).
function besideBlock(lines, block, mine) {
  const column = (label, text) =>
    el(
      "div",
      { class: "mgpt-src__col" },
      el("p", { class: "mgpt-src__coltitle", text: label }),
      el("pre", { class: "mgpt-src__colcode", tabIndex: 0, role: "region", "aria-label": label }, el("code", { text })),
    );
  return el(
    "figure",
    { class: "mgpt-src__beside", "data-level2": "solved" },
    el("figcaption", { text: "Level 2 passed: your whole multi_head beside microgpt's multi-head attention." }),
    el(
      "div",
      { class: "mgpt-src__cols" },
      column(`microgpt.py, lines ${block.first} to ${block.last}`, dedent(lines.slice(block.first - 1, block.last))),
      // (Without its docstring, the starter's words: the code lines face microgpt's.)
      column(
        "Your multi_head (Level 2)",
        mine.replace(/^(def [^\n]*\n)\s+(?:"""|''')[\s\S]*?(?:"""|''')[^\n]*\n/, "$1"),
      ),
    ),
  );
}

// The exercise's lines in microgpt.py, in the order the learner writes them.
export const BLANK_LINES = [/^\s*k_h = /, /^\s*v_h = /, /^\s*blended = /, /\.extend\(/];

// The learner's lines that stand for the file's blank lines: the assignments to
// k_h, v_h and blended, and the line that adds to out, inside their multi_head.
export function learnerLines(code) {
  if (typeof code !== "string") return [];
  const lines = code.split("\n");
  const begin = lines.findIndex((l) => /^def multi_head\(/.test(l));
  if (begin < 0) return [];
  let end = lines.findIndex((l, i) => i > begin && /^\S/.test(l));
  if (end < 0) end = lines.length;
  const body = lines.slice(begin + 1, end);
  const pick = (re) => {
    const found = body.find((l) => re.test(l.split("#")[0]));
    return found ? found.trim() : null;
  };
  return [
    pick(/^\s*k_h\s*=/),
    pick(/^\s*v_h\s*=/),
    pick(/^\s*blended\s*[=+]/),
    pick(/\bout\s*(\.extend\(|\.append\(|\+=)/),
  ];
}

function build(root, lines, state) {
  const block = findBlock(lines);
  if (!block) {
    root.replaceChildren(
      el("p", {
        class: "mha-panel mha-panel--error",
        role: "alert",
        text: "microgpt.py has no multi-head attention markers.",
      }),
    );
    return;
  }
  const inBlock = (n) => n >= block.first && n <= block.last;
  const find = (re) => {
    for (let n = block.first; n <= block.last; n++) if (re.test(lines[n - 1])) return n;
    return null;
  };
  const loopLine = find(/for h in range/);
  const woLine = find(/attn_wo/);
  const blanks = BLANK_LINES.map(find).filter(Boolean); // 1-based line numbers, in exercise order

  const count = el("span", { class: "mgpt-src__count", "aria-live": "polite" });
  const intro = el("p", { class: "mgpt-src__intro" });
  const code = el("code");
  const scroller = el(
    "div",
    {
      class: "mgpt-src",
      tabIndex: 0,
      role: "region",
      "aria-label": `microgpt.py, ${lines.length} lines; lines ${block.first} to ${block.last} are highlighted`,
    },
    el("pre", {}, code),
  );
  const title = el("p", { class: "mgpt-src__title" }, el("strong", { text: "microgpt.py" }), count);
  const beside = el("div", { class: "mgpt-src__level2" });
  root.replaceChildren(intro, title, scroller, beside);
  let besideShown = null;
  const renderBeside = () => {
    const solved = level2.getProgress();
    const mine = solved.solved ? learnerFunction(solved.solvedCode) : null;
    if (mine === besideShown) return;
    besideShown = mine;
    beside.replaceChildren(...(mine ? [besideBlock(lines, block, mine)] : []));
  };

  const indent = (line) => line.match(/^\s*/)[0];
  let shown = null;
  const render = (progress) => {
    const unlocked = Boolean(progress.solved || progress.revealed);
    const learned = progress.solved ? block.endMarker : block.beginMarker - 1;
    count.textContent =
      ` ${learned} / ${lines.length} lines learned` +
      (progress.solved
        ? " (multi-head attention unlocked)"
        : unlocked
          ? " (you looked at the solution: pass the check to count these lines)"
          : " (solve the exercise to unlock the lines marked ✎)");
    count.dataset.learned = String(learned);
    count.dataset.total = String(lines.length);
    scroller.dataset.solved = String(progress.solved);
    scroller.dataset.unlocked = String(unlocked);
    const parts = [`Lines ${block.first} to ${block.last} (highlighted) are multi-head attention`];
    if (loopLine) parts.push(`line ${loopLine} loops over the heads and slices the query`);
    if (woLine) parts.push(`line ${woLine} mixes the heads with attn_wo`);
    intro.textContent =
      `${parts.join("; ")}. The lines marked ✎ (${blanks.join(", ")}) are the ones you write in the exercise` +
      (unlocked
        ? "; beside each is your own version."
        : ": they show here once your check passes (or you ask for the solution).");
    const mine = progress.solved ? learnerLines(progress.solvedCode) : [];
    const key = JSON.stringify([unlocked, mine]);
    if (key === shown) return;
    shown = key;
    code.replaceChildren();
    lines.forEach((line, i) => {
      const n = i + 1;
      const blank = blanks.indexOf(n);
      const classes =
        `mgpt-src__line${inBlock(n) ? " mgpt-src__line--mha" : ""}${blank >= 0 ? " mgpt-src__line--blank" : ""}` +
        (blank >= 0 && !unlocked ? " mgpt-src__line--locked" : "");
      const text = blank >= 0 && !unlocked ? `${indent(line)}✎ your line ${blank + 1} goes here` : line || " ";
      const row = el(
        "span",
        { class: classes, "data-line": String(n) },
        el("span", { class: "mgpt-src__no", "aria-hidden": "true", text: blank >= 0 ? `✎${n}` : String(n) }),
        el("span", { class: "mgpt-src__text", text }),
      );
      code.append(row, "\n");
      if (blank >= 0 && unlocked) {
        const yours = mine[blank];
        const note = progress.solved
          ? yours
            ? `${indent(line)}# yours: ${yours}`
            : `${indent(line)}# yours: (written differently; your code passed)`
          : `${indent(line)}# yours: appears when your check passes`;
        code.append(
          el(
            "span",
            { class: "mgpt-src__line mgpt-src__line--yours", "data-yours": String(blank + 1) },
            el("span", { class: "mgpt-src__no", "aria-hidden": "true", text: "" }),
            el("span", { class: "mgpt-src__text", text: note }),
          ),
          "\n",
        );
      }
    });
  };
  render(getProgress());
  renderBeside();
  const offs = [onProgress((progress) => render(progress)), level2.onProgress(renderBeside)];
  state.off = () => offs.forEach((off) => off());
  // Show the highlighted block first (scroll inside the box, not the page).
  requestAnimationFrame(() => {
    const first = code.querySelector(".mgpt-src__line--mha");
    if (first) scroller.scrollTop = Math.max(0, first.offsetTop - scroller.clientHeight / 4);
  });
}

export function dispose(root) {
  const state = release(mounted, root);
  if (state && state.off) state.off();
}
