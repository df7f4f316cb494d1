// The rack map: the label of the space under the pointer or the keyboard focus, shown in the
// status line at the bottom of the map (the <title> tooltip alone never appears on focus).
// Optional: without JavaScript the map, its links, tooltips and table view work the same.
(function () {
  "use strict";
  function label(target) {
    if (!target || !target.closest) return null;
    var link = target.closest("svg.rk a");
    if (link) return link.getAttribute("aria-label");
    var rect = target.closest("svg.rk rect");
    if (!rect) return null;
    var own = rect.querySelector("title");
    if (own) return own.textContent;
    var row = rect.parentNode && rect.parentNode.querySelector(":scope > title");
    return row ? row.textContent : null;
  }
  function show(event) {
    var text = label(event.target);
    var status = document.getElementById("rk-status");
    if (text && status) {
      status.textContent = text;
      status.hidden = false;
    }
  }
  document.addEventListener("focusin", show);
  document.addEventListener("mouseover", show);
})();
