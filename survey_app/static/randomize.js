/*
 * The survey form (DESIGN.md, "The mechanisms"): a new form posts the reports, the plain
 * answers and randomized=client, each value at one length; the one filled in is reset.
 * Without crypto or a module for each mechanism, it posts as it is: the server randomizes.
 * Display logic (DESIGN.md, "Display logic"): a question with data-show-if is shown while
 * the plain answer it depends on meets its condition; hidden, its inputs are disabled
 * (never posted) and not required, and its data-na input (disabled without JavaScript)
 * posts instead, as long as any report of it: the request is the same size either way.
 */
(function () {
  "use strict";
  const R = window.surveyRandomizer;

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
    form.querySelectorAll('input[type="hidden"]:enabled').forEach((input) => {
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
    add("randomized", "client");
    return out;
  }

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
    if (!(R && window.crypto && window.crypto.getRandomValues)) return;
    all('form[data-randomize="survey"]', (form) => {
      const design = designOf(form);
      if (!design) return;
      form.addEventListener("submit", (event) => onSubmit(event, design));
      show(form); // only when it randomizes: otherwise the page works as without scripts
      form.addEventListener("input", () => show(form));
      all(".js-only", (e) => { e.hidden = false; });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
