/*
 * The survey form (DESIGN.md, "The mechanisms"): a new form posts the reports, the plain
 * answers and randomized=client, each value at one length; the one filled in is reset.
 * Without crypto or a module for each mechanism, it posts as it is: the server randomizes.
 * Display logic (DESIGN.md, "Display logic"): a question with data-show-if is shown while
 * the plain answer it depends on meets its condition; hidden, its inputs are disabled
 * (never posted) and not required, and the new form posts its data-not-applicable value,
 * as long as any report of it, so the request is the same size shown or not.
 */
(function () {
  "use strict";
  const R = window.surveyRandomizer;

  const conditioned = (form) => form.querySelectorAll("fieldset[data-show-if]");

  function plainAnswer(form, key) { // an option's index or a number; null: none
    const field = form.querySelector(`fieldset[data-key="${key}"]`);
    if (field && field.hidden) return null; // it did not apply itself
    for (const input of form.querySelectorAll(`[name="${key}"]:enabled`)) {
      if (input.type === "radio" && !input.checked) continue;
      const n = input.value === "" ? NaN : Number(input.value);
      return Number.isInteger(n) ? n : null;
    }
    return null;
  }

  function holds(c, answer) {
    if (answer === null) return false;
    if (c.options.length) return c.options.includes(answer);
    return (c.min === null || answer >= c.min) && (c.max === null || answer <= c.max);
  }

  function showApplicable(form) { // in page order: conditions chain as they are read
    conditioned(form).forEach((field) => {
      const c = JSON.parse(field.dataset.showIf);
      const shown = holds(c, plainAnswer(form, c.question));
      field.hidden = !shown;
      const named = new Set();
      field.querySelectorAll("input,select").forEach((input) => {
        if (input.closest(".js-swap[hidden]")) return; // swapped out: stays off
        input.disabled = !shown;
        // One required radio makes its group required; a select or a text input alike.
        input.required = shown && "required" in field.dataset && !named.has(input.name);
        named.add(input.name);
      });
    });
  }

  function randomizedForm(form, design) {
    const out = document.createElement("form");
    out.method = "post";
    out.action = form.action;
    out.hidden = true;
    const add = (name, value) => {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = value;
      out.appendChild(input);
    };
    const hidden = new Set();
    form.querySelectorAll('input[type="hidden"]').forEach((input) => {
      hidden.add(input.name);
      add(input.name, input.value);
    });
    const seen = new Set(), own = (key) => Object.prototype.hasOwnProperty.call(design, key);
    const ticks = {}; // tick all that apply: "<key>.<j>" y/n, in order, sent as the report
    for (const [name, value] of new FormData(form)) {
      if (hidden.has(name) || typeof value !== "string" || value === "") continue;
      const [key, j] = name.split(".");
      if (j && own(key)) {
        ticks[key] = (ticks[key] || "") + { y: 1, n: 0 }[value];
      } else if (own(name)) {
        if (seen.has(name)) throw new Error("two answers for " + name);
        seen.add(name);
        add(name, R.wire(design[name], value));
      } else {
        const input = form.querySelector(`[name="${name}"]:enabled`);
        add(name, input && input.type === "number" ? R.pad(value) : value); // plain
      }
    }
    for (const key in ticks) add(key, R.wire(design[key], ticks[key])); // throws unless k bits
    conditioned(form).forEach((field) => {
      if (field.hidden) add(field.dataset.key, field.dataset.notApplicable);
    });
    add("randomized", "client");
    return out;
  }

  function onSubmit(event, design) {
    const form = event.currentTarget;
    if (!form.checkValidity()) return; // the browser points at what is missing
    let out;
    try {
      out = randomizedForm(form, design);
    } catch (error) {
      console.error("not randomized in the browser:", error);
      return; // posts as it is; the server randomizes
    }
    event.preventDefault();
    form.reset(); // so Back shows no true answer
    document.body.appendChild(out);
    const button = form.querySelector('button[type="submit"]');
    if (button) button.disabled = true;
    out.submit();
  }

  function designOf(form) { // null unless each of its mechanisms has a module here
    try {
      const design = JSON.parse(form.dataset.design);
      const ready = Object.values(design).every((p) => R.has(p.mechanism));
      return ready && typeof design === "object" ? design : null;
    } catch {
      return null;
    }
  }

  const all = (selector, f) => document.querySelectorAll(selector).forEach(f);

  function start() {
    all(".js-swap", (e) => { // no-JS field off, number input on
      e.hidden = !e.hidden;
      e.querySelector("input,select").disabled = e.hidden;
    });
    all('form[data-randomize="survey"]', (form) => {
      showApplicable(form);
      form.addEventListener("input", () => showApplicable(form));
      form.addEventListener("change", () => showApplicable(form));
    });
    if (!(R && window.crypto && window.crypto.getRandomValues)) return;
    all('form[data-randomize="survey"]', (form) => {
      const design = designOf(form);
      if (!design) return;
      form.addEventListener("submit", (event) => onSubmit(event, design));
      all(".js-only", (e) => { e.hidden = false; });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
