/* The survey builder's live preview (templates/research/builder.html).
 *
 * The page works without this script: its buttons post the form and the server answers
 * with the preview. With it, the fields of a question's type show as the type changes,
 * a folded question's one line follows its type and text, and the preview follows the
 * form as the researcher types: the form is posted (with its CSRF token) to the preview
 * address, at most every half second, and the answer, an HTML fragment of our own,
 * replaces the panel. The status line says so politely to screen readers. No answer is
 * ever sent anywhere: the preview has no working form.
 *
 * A sectioned survey's preview shows one section at a time, as a respondent sees it: the
 * panel's Previous and Next buttons (outside its disabled fieldset) step through them,
 * moving the focus to the section's heading and saying "Section 2 of 5"; the section
 * shown stays shown as the panel follows the typing.
 */
(function () {
  "use strict";
  const form = document.getElementById("builder-form");
  const panel = document.getElementById("preview-panel");
  const status = document.getElementById("preview-status");
  if (!form || !panel || !status || !window.fetch || !window.FormData) return;
  const DELAY_MS = 500;
  let timer = null;
  let latest = 0;
  let shownSection = 0;

  function showFieldsOf(question) {
    const type = question.querySelector('[data-role="type"]').value;
    const sensitive = question.querySelector('[data-role="sensitive"]');
    const randomized = type === "yes_no" || !sensitive || sensitive.checked;
    for (const part of question.querySelectorAll("[data-types]")) {
      part.hidden = !part.getAttribute("data-types").split(" ").includes(type);
    }
    for (const part of question.querySelectorAll("[data-randomized]")) {
      part.hidden = !randomized;
    }
  }

  /* A folded question's line shows its type and text: [data-shows] names the field. */
  function showInSummary(field) {
    for (const shown of form.querySelectorAll('[data-shows="' + field.id + '"]')) {
      shown.textContent = field.selectedOptions ? field.selectedOptions[0].textContent : field.value;
    }
  }

  function clearErrors() {
    document.getElementById("builder-errors")?.remove();
    for (const message of form.querySelectorAll(".field-error")) message.remove();
    for (const field of form.querySelectorAll(".field.invalid")) field.classList.remove("invalid");
    for (const input of form.querySelectorAll('[aria-invalid="true"]')) {
      input.removeAttribute("aria-invalid");
      const ids = (input.getAttribute("aria-describedby") || "")
        .split(" ")
        .filter((id) => id && !id.endsWith("-error"));
      if (ids.length) input.setAttribute("aria-describedby", ids.join(" "));
      else input.removeAttribute("aria-describedby");
    }
  }

  /* One of the import's problems next to the field it names, as a full post shows it
   * (several at one field share one message line, as there). */
  function markError(input, text) {
    const id = input.id + "-error";
    const shown = document.getElementById(id);
    if (shown) {
      shown.append(document.createElement("br"), text);
      return;
    }
    const message = document.createElement("p");
    message.className = "field-error";
    message.id = id;
    message.textContent = text;
    const field = input.closest(".field");
    if (field) {
      field.classList.add("invalid");
      field.appendChild(message);
    } else {
      input.insertAdjacentElement("afterend", message);
    }
    input.setAttribute("aria-invalid", "true");
    const described = input.getAttribute("aria-describedby");
    input.setAttribute("aria-describedby", (described ? described + " " : "") + id);
    const fold = input.closest("details");
    if (fold) fold.open = true;
  }

  /* Every problem the preview lists, at its field. */
  function markErrors() {
    clearErrors();
    for (const problem of panel.querySelectorAll("[data-error-field]")) {
      const input = document.getElementById(problem.getAttribute("data-error-field"));
      const text = problem.querySelector("[data-message]");
      if (input && text) markError(input, text.textContent);
    }
  }

  /* Show section ``index`` of the preview alone (the nearest there is), if it has several. */
  function showSection(index, moveFocus) {
    const walk = panel.querySelector("[data-section-walk]");
    const sections = panel.querySelectorAll(".preview-frame .survey-section");
    if (!walk || sections.length < 2) return;
    shownSection = Math.min(Math.max(index, 0), sections.length - 1);
    sections.forEach((section, at) => {
      section.hidden = at !== shownSection;
    });
    const shown = sections[shownSection];
    walk.querySelector('[data-step="-1"]').disabled = shownSection === 0;
    walk.querySelector('[data-step="1"]').disabled = shownSection === sections.length - 1;
    const progress = shown.querySelector(".progress span");
    walk.querySelector("[data-walk-status]").textContent = progress.textContent;
    walk.hidden = false;
    panel.querySelector("[data-walk-note]").hidden = true;
    if (moveFocus) shown.querySelector("h2").focus();
  }

  async function refresh() {
    const request = ++latest;
    status.textContent = status.getAttribute("data-updating");
    try {
      const response = await fetch(form.getAttribute("data-preview-url"), {
        method: "POST",
        body: new FormData(form),
        credentials: "same-origin",
        headers: { "X-Requested-With": "fetch" },
      });
      if (!response.ok || response.redirected) {
        throw new Error("preview refused: " + response.status);
      }
      const html = await response.text();
      if (request !== latest) return; // a newer edit's preview is on its way
      panel.innerHTML = html;
      showSection(shownSection, false);
      markErrors();
      const invalid = panel.querySelector(".preview-missing") !== null;
      status.textContent = status.getAttribute(invalid ? "data-invalid" : "data-updated");
    } catch {
      if (request === latest) status.textContent = status.getAttribute("data-failed");
    }
  }

  function schedule() {
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, DELAY_MS);
  }

  for (const question of form.querySelectorAll("[data-question]")) showFieldsOf(question);
  showSection(0, false);
  panel.addEventListener("click", (event) => {
    const step = event.target.closest("[data-step]");
    if (step) showSection(shownSection + Number(step.getAttribute("data-step")), true);
  });
  form.addEventListener("change", (event) => {
    const question = event.target.closest("[data-question]");
    if (question) showFieldsOf(question);
  });
  form.addEventListener("input", (event) => showInSummary(event.target));
  // The preview settings live outside the form (form="builder-form") but belong to it.
  for (const control of [form, ...document.querySelectorAll('[form="builder-form"]')]) {
    control.addEventListener("input", schedule);
    control.addEventListener("change", schedule);
  }
})();
