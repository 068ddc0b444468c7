// Inline in every page's head (overrides/main.html): js/main.js marks
// <html data-mha-main="started"> when it runs. If its <script> fails to load,
// or it has not run once the page has loaded, every widget's "loading..."
// placeholder is replaced by one message, on this page and on pages reached
// by instant navigation.
(function () {
  var failed = false;
  function show() {
    if (document.documentElement.getAttribute("data-mha-main")) return;
    failed = true;
    var roots = document.querySelectorAll("[data-mha-widget]");
    for (var i = 0; i < roots.length; i++) {
      if (roots[i].querySelector(".mha-main-missing")) continue;
      var box = document.createElement("p");
      box.className = "mha-panel mha-panel--error mha-main-missing";
      box.setAttribute("role", "alert");
      box.textContent = "This interactive part could not start: the site's script (js/main.js) did not load. " +
        "Reload the page; if it keeps failing, try a current Chrome, Edge, Firefox or Safari, or tell the " +
        "site's maintainer. The rest of the lesson reads fine without it.";
      roots[i].replaceChildren ? roots[i].replaceChildren(box) : (roots[i].innerHTML = "", roots[i].appendChild(box));
    }
  }
  window.addEventListener("error", function (event) {
    var el = event.target;
    if (el && el.tagName === "SCRIPT" && /\/js\/main\.js(?:[?#]|$)/.test(el.src)) {
      if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", show);
      else show();
    }
  }, true);
  window.addEventListener("load", function () {
    show();
    if (failed && window.document$ && window.document$.subscribe) window.document$.subscribe(show);
  });
})();
