// Where the stepper is on the model: the page's own model map (::figure:: model-map, page 4),
// copied without its ids and links, with this step's boxes marked. The whole map, small
// enough to sit beside the step, would be a thumbnail of 5 px text, so it sits above the step,
// wide enough to read (stepper.css), and shows only the band of rows around this step's boxes.

const STAGE_LANE = ["scores", "mask", "A", "AV"]; // the per-head lane boxes of the model map, in order
// How tall the map's band above the step is at least, in the map's own units, with a margin
// around this step's boxes.
const MAP_BAND = 150;
const MAP_MARGIN = 24;

// An element's box in the map's viewBox units, through any transforms of the groups around it.
function boxInMap(svg, node) {
  const b = node.getBBox();
  const toMap = svg.getScreenCTM()?.inverse().multiply(node.getScreenCTM());
  if (!toMap) return { y: 0, height: 0 };
  const ys = [
    [b.x, b.y],
    [b.x + b.width, b.y + b.height],
  ].map(([x, y]) => new DOMPoint(x, y).matrixTransform(toMap).y);
  return { y: Math.min(...ys), height: Math.abs(ys[1] - ys[0]) };
}

// The page's map, made a picture only: no ids to clash with the original's, no links, no focus.
function copyMap(source) {
  const svg = source.cloneNode(true);
  for (const a of svg.querySelectorAll("a")) {
    const key = (a.id || "").replace(/^map-/, "");
    if (key) a.dataset.key = key;
    a.removeAttribute("id");
    a.setAttribute("tabindex", "-1");
    a.removeAttribute("href");
    a.removeAttributeNS("http://www.w3.org/1999/xlink", "href");
  }
  svg.querySelectorAll("[id]").forEach((node) => node.removeAttribute("id"));
  svg.querySelectorAll("title, desc").forEach((node) => node.remove());
  svg.querySelectorAll(".mha-lane").forEach((lane) => {
    lane.querySelectorAll("a").forEach((a, k) => {
      a.dataset.key = STAGE_LANE[k];
    });
  });
  svg.removeAttribute("aria-labelledby");
  svg.removeAttribute("width"); // its shape then follows the viewBox, which frame() may crop
  svg.removeAttribute("height");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  return svg;
}

export class StepperMap {
  constructor(host) {
    this.host = host;
    this.svg = null;
    this.wholeView = null;
  }

  // keys: the map boxes the step is at; heads: the run's model's heads (lanes beyond are dimmed).
  show(keys, heads) {
    const source = document.querySelector("#fig-model-map svg");
    if (!source) {
      this.host.hidden = true;
      return;
    }
    if (!this.svg) {
      this.svg = copyMap(source);
      this.host.replaceChildren(this.svg);
    }
    for (const a of this.svg.querySelectorAll("a[data-key]")) {
      const lane = a.closest(".mha-lane");
      const inLane = !lane || Number(lane.dataset.head) < heads;
      a.classList.toggle("mha-fig__link--here", keys.includes(a.dataset.key) && inLane);
    }
    this.svg
      .querySelectorAll(".mha-lane")
      .forEach((lane) => lane.classList.toggle("mha-st__lane--off", Number(lane.dataset.head) >= heads));
    this.frame();
  }

  frame() {
    const svg = this.svg;
    if (!svg) return;
    if (!this.wholeView) this.wholeView = svg.getAttribute("viewBox");
    const [x0, y0, width, height] = this.wholeView.split(/[\s,]+/).map(Number);
    let view = this.wholeView;
    const boxes = [...svg.querySelectorAll(".mha-fig__link--here")]
      .map((a) => boxInMap(svg, a))
      .filter((b) => b.height > 0);
    if (boxes.length) {
      const top = Math.min(...boxes.map((b) => b.y));
      const bottom = Math.max(...boxes.map((b) => b.y + b.height));
      const band = Math.min(height, Math.max(MAP_BAND, bottom - top + 2 * MAP_MARGIN));
      const y = Math.max(y0, Math.min(y0 + height - band, (top + bottom) / 2 - band / 2));
      view = `${x0} ${y.toFixed(1)} ${width} ${band.toFixed(1)}`;
    }
    svg.setAttribute("viewBox", view);
    this.host.classList.toggle("mha-st__map--band", view !== this.wholeView);
    // A label the band cuts through would show as half a line of text: only whole ones show.
    const [, top, , band] = view.split(/[\s,]+/).map(Number);
    for (const t of svg.querySelectorAll("text")) {
      const b = view === this.wholeView ? null : boxInMap(svg, t);
      t.style.visibility = !b || (b.y >= top - 0.5 && b.y + b.height <= top + band + 0.5) ? "" : "hidden";
    }
  }
}
