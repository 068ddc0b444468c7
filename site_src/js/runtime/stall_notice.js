// The page's one notice for stalled downloads (runtime/download_watch.js): it
// says which file stopped coming and how far it got, and its Retry button asks
// for every stalled file again. Shown only while a download is stalled, on
// whatever page the learner is reading; the widgets keep their own progress.

import { onStalls, retryStalled, stallText } from "./download_watch.js";

export function watchStalls() {
  let box = null;
  let text = null;
  onStalls((list) => {
    if (!list.length) {
      if (box) box.remove();
      box = null;
      return;
    }
    if (!box) {
      box = document.createElement("div");
      box.className = "mha-update mha-stall";
      box.setAttribute("role", "alert");
      text = document.createElement("p");
      const retry = document.createElement("button");
      retry.type = "button";
      retry.className = "md-button md-button--primary";
      retry.textContent = "Retry";
      retry.addEventListener("click", () => retryStalled());
      box.append(text, retry);
      document.body.append(box);
    }
    text.textContent = stallText(list);
  });
}
