// The address's #fragment: what it names, a stale one dropped, and a target behind a door brought
// into view.

// The fragment is whatever the address holds: "#%" or "#%E0%A4%A" are not valid
// percent-encoding, so they are read as they are, never thrown on.
export function fragmentId(hash) {
  const raw = String(hash || "").replace(/^#/, "");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

// Instant navigation keeps the address's #fragment when the page it leads to
// has no element with that id (a link to /compare/ clicked on /microgpt/#watch
// showed /compare/#watch). A fragment that names nothing on this page is dropped.
export function dropStaleAnchor() {
  const id = fragmentId(location.hash);
  if (id && !document.getElementById(id)) {
    history.replaceState(history.state, "", location.pathname + location.search);
  }
}

// A link to something inside a door (<details>, page 4's map boxes lead to their stage's
// numbers): the door opens, and the target comes into view once it has a place on the page
// (the browser's own jump happened while the door was shut, and found nothing to scroll to).
export function revealInDoor() {
  const target = document.getElementById(fragmentId(location.hash));
  if (!target || !target.closest("details")) return;
  for (let door = target.closest("details"); door; door = door.parentElement && door.parentElement.closest("details")) {
    door.open = true;
  }
  requestAnimationFrame(() => target.scrollIntoView({ block: "start" }));
}
