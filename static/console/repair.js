// Confirm buttons marked data-submit-once submit their form once: a second click is ignored
// (the server's idempotency key makes a double submit harmless; this spares the round trip).
document.addEventListener("submit", function (event) {
  var button = event.target.querySelector("button[data-submit-once]");
  if (!button) return;
  if (button.dataset.submitted) { event.preventDefault(); return; }
  button.dataset.submitted = "1";
  button.setAttribute("aria-disabled", "true");
});
