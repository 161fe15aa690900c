/*
 * Display logic (DESIGN.md, "Display logic"): a question with data-show-if is shown while
 * the plain answer it depends on meets its condition; hidden, its inputs are disabled
 * (never posted) and not required, and its data-na input (disabled without JavaScript)
 * posts instead, as long as any report of it: the request is the same size either way.
 * Loaded only by a survey with conditions, and acting only on a form randomize.js takes
 * over (its "randomizing" event): otherwise the server decides, from the posted answers.
 */
(function () {
  "use strict";

  function show(form) { // a hidden question's inputs are off: a condition on it fails
    form.querySelectorAll("[data-show-if]").forEach((field) => {
      const c = JSON.parse(field.dataset.showIf);
      let v = NaN; // its data-na value is last and no number
      form.querySelectorAll(`[name="${c.q}"]:enabled`).forEach((i) => {
        if (i.type !== "radio" || i.checked) v = i.value ? +i.value : NaN;
      });
      const on = c.is ? c.is.includes(v) : v >= c.min && v <= c.max;
      field.hidden = !on;
      field.querySelectorAll("input,select").forEach((i) => {
        if (i.closest(".js-swap[hidden]")) return; // swapped out: stays off
        i.disabled = on === "na" in i.dataset;
        i.required = on && "req" in i.dataset;
      });
    });
  }

  document.addEventListener("randomizing", (event) => {
    const form = event.target;
    show(form);
    form.addEventListener("input", () => show(form));
  });
})();
