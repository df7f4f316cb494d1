// Confirm buttons marked data-submit-once submit their form once: a second click is ignored
// (the server's idempotency key makes a double submit harmless; this spares the round trip).
document.addEventListener("submit", function (event) {
  var button = event.target.querySelector("button[data-submit-once]");
  if (!button) return;
  if (button.dataset.submitted) { event.preventDefault(); return; }
  button.dataset.submitted = "1";
  button.setAttribute("aria-disabled", "true");
});

// A scanner types the code and presses Enter. In a scan field, Enter moves on to the next
// empty scan field instead of submitting a half-filled form; in the last one it submits.
// Without JavaScript, Enter submits and the server names the missing code.
document.addEventListener("keydown", function (event) {
  var field = event.target;
  if (event.key !== "Enter" || !field.form || !field.matches("input[data-scan]")) return;
  var scans = Array.prototype.slice.call(field.form.querySelectorAll("input[data-scan]"));
  var next = scans.slice(scans.indexOf(field) + 1).filter(function (f) { return !f.value; })[0];
  if (next) { event.preventDefault(); next.focus(); }
});
