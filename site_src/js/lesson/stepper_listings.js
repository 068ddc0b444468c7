// The code under each step of page 4's stepper: the lines of the project's own files that
// compute it, highlighted at build time (site_src/hooks/stepper_code.py, stepper_code.json).
// A section the build lacks is said in words, not left blank.

import { el } from "../runtime/dom.js";

// names: the step's sections ("file#name"); sections: stepper_code.json's, by name.
export function showListings(host, names, sections) {
  host.replaceChildren();
  for (const name of names) {
    const s = sections[name];
    if (!s) {
      host.append(
        el("p", { class: "mha-st__missing", text: `(The code section ${name} is missing from this build.)` }),
      );
      continue;
    }
    const lines = s.end - s.start + 1;
    const numbers = Array.from({ length: lines }, (_, i) => String(s.start + i)).join("\n");
    const pre = el("pre", { class: "mha-st__pre" }, el("code", {}));
    pre.firstChild.innerHTML = s.html; // highlighted at build time from the project's own file
    host.append(
      el(
        "div",
        { class: "mha-st__listing", "data-section": name },
        el("p", {
          class: "mha-code__source",
          text: `${lines === 1 ? "Line" : "Lines"} ${s.start}${lines === 1 ? "" : `–${s.end}`} of ${s.path}`,
        }),
        el(
          "div",
          {
            class: "highlight mha-st__codebox",
            tabindex: "0",
            role: "region",
            "aria-label": `Code: ${s.path}, lines ${s.start} to ${s.end}`,
          },
          el("pre", { class: "mha-st__ln", "aria-hidden": "true", text: numbers }),
          pre,
        ),
      ),
    );
  }
}
