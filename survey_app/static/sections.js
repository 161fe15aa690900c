/*
 * A sectioned survey walked in one page (DESIGN.md, "Sections"): Next shows the next
 * section once the browser's own checks pass on the one shown, Back the one before, and
 * focus goes to the new section's heading. Nothing leaves the browser until the last
 * section's button, which randomize.js handles as for a survey of one page (one POST of
 * reports). Only on a form randomize.js takes over (its "randomizing" event, sent before
 * it listens for the submit, so that Enter and Next act first): otherwise each Next posts
 * its section and the server randomizes it and carries its reports forward
 * (web/respond/section_steps.py). The page holds the first section; the others are
 * fetched from its data-sections address (no answer goes with it) and added hidden.
 * Until they are in, and if they never come, the page works as without JavaScript: the
 * carried field stays, and randomize.js leaves a form that has one to the server.
 */
(function () {
  "use strict";
  function walk(form) {
    const sections = Array.from(form.querySelectorAll("section.survey-section"));
    let at = 0;
    const show = (index) => {
      sections.forEach((section, i) => { section.hidden = i !== index; });
      at = index;
      sections[index].querySelector("h2").focus();
    };
    const next = () => {
      const section = sections[at];
      const problem = section.querySelector(".section-problem");
      const fields = section.querySelectorAll("input, select, textarea");
      const wrong = Array.from(fields).find((field) => !field.checkValidity());
      if (wrong) { // said in words too, for a screen reader (role="alert")
        problem.textContent = problem.dataset.message;
        problem.hidden = false;
        wrong.reportValidity();
        return;
      }
      problem.hidden = true;
      show(at + 1);
    };
    const carried = form.querySelector('input[name="sections-carried"]');
    if (carried) carried.remove(); // the whole survey is sent at once
    form.querySelectorAll("fieldset.section-fields").forEach((f) => { f.disabled = false; });
    form.querySelectorAll(".section-next, .section-back").forEach((button) => {
      button.type = "button"; // no POST: the page walks on
      const forward = button.classList.contains("section-next");
      button.addEventListener("click", () => (forward ? next() : show(at - 1)));
    });
    form.addEventListener("keydown", (event) => { // Enter goes on, as Next would
      if (event.key === "Enter" && event.target.tagName === "INPUT" && at < sections.length - 1) {
        event.preventDefault();
        next();
      }
    });
    form.addEventListener("invalid", (event) => { // on sending: a field of a hidden section
      const section = event.target.closest("section.survey-section");
      if (section && section.hidden) show(sections.indexOf(section));
    }, true);
  }

  function addOthers(form, address) {
    fetch(address, { credentials: "same-origin" })
      .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
      .then((html) => {
        const shown = form.querySelectorAll("section.survey-section");
        shown[shown.length - 1].insertAdjacentHTML("afterend", html);
        walk(form);
        form.dispatchEvent(new Event("input")); // display logic on the sections added
      })
      .catch(() => { /* none added: each Next posts its section, as without scripts */ });
  }

  document.addEventListener("randomizing", (event) => {
    const form = event.target;
    if (!form.querySelector("section.survey-section")) return;
    if (form.dataset.sections) addOthers(form, form.dataset.sections);
    else walk(form);
  });
})();
