// The one DOM builder of the site's widgets.
//
//   el("button", { class: "md-button", text: "Run", type: "button", onclick: go }, child, ...)
//
// Learner text only ever reaches the page as text (the `text` key or a string
// child), never as markup. Attribute values:
//   class -> className; text -> textContent; style -> an object of style
//   properties or a CSS string; on<event> with a function -> addEventListener;
//   null / undefined -> left out;
//   a boolean -> the DOM property of that name where the element has one
//   (hidden, disabled, checked, spellcheck...), otherwise the attribute is
//   present (true) or left out (false);
//   anything else -> setAttribute(key, String(value)).
// Children may be nested arrays; null, undefined and false are skipped and
// anything that is not a Node becomes a text node.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "style") {
      if (typeof value === "string") node.setAttribute("style", value);
      else Object.assign(node.style, value);
    } else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (typeof value === "boolean") {
      if (key in node) node[key] = value;
      else if (value) node.setAttribute(key, "");
    } else node.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A message box: kind is "error" (announced at once), "notice" or "info".
export function panel(kind, title, message, extra = null) {
  return el(
    "div",
    { class: `mha-panel mha-panel--${kind}`, role: kind === "error" ? "alert" : "status" },
    title ? el("strong", { text: title }) : null,
    title ? " " : null,
    el("span", { text: message }),
    extra,
  );
}

let counter = 0;

// A page-unique id for label/aria wiring.
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}
