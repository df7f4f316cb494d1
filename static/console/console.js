/* Tidy Recovery Console behaviour. Kept out of the templates: the Content Security Policy allows
   no inline script, no on*= handler and no eval (docs/operations.md, "Security"). Every page
   works without it. */
(function () {
  "use strict";
  // A live region marked data-pause-while-focused skips its refresh while keyboard focus is
  // inside it, so a keyboard user never loses their place.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail && event.detail.elt;
    if (!elt || !elt.hasAttribute || !elt.hasAttribute("data-pause-while-focused")) {
      return;
    }
    var active = document.activeElement;
    if (active && active !== document.body && elt.contains(active)) {
      event.preventDefault();
    }
  });
})();
