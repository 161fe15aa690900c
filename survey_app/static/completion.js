/*
 * The thank-you page's return to a panel (templates/respond/_completion.html): with
 * JavaScript the page follows the link by itself after a few seconds, saying so first and
 * offering to stay (to read what was stored, say). Without JavaScript the link is all
 * there is, and it is always shown.
 */
(function () {
  "use strict";

  const SECONDS = 5;
  const link = document.getElementById("completion-link");
  const note = document.getElementById("completion-note");
  const stay = document.getElementById("completion-stay");
  if (!link || !note || !stay) return;

  note.hidden = false;
  const timer = window.setTimeout(() => window.location.assign(link.href), SECONDS * 1000);
  stay.addEventListener("click", () => {
    window.clearTimeout(timer);
    note.hidden = true;
    link.focus();
  });
})();
