/*
 * The survey form (DESIGN.md, "The mechanisms"): a new form posts the reports, the plain
 * answers and randomized=client, each value at one length; the one filled in is reset.
 * Without crypto or a module for each mechanism, it posts as it is: the server randomizes.
 * A form it takes over gets a "randomizing" event first: sections.js and show_if.js act on
 * a page only then (otherwise it works as without scripts). A question's enabled hidden
 * input (show_if.js's not-applicable value) is posted as it is, in its place.
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
    const hidden = new Set(), na = {}; // na: a hidden question's placeholder, in its place
    form.querySelectorAll('input[type="hidden"]:enabled').forEach((input) => {
      hidden.add(input.name);
      if ("na" in input.dataset) na[input.name] = input.value;
      else add(input.name, input.value);
    });
    const has = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
    const answers = {}, ticks = {}; // ticks: "<key>.<j>" y/n, bit j of the report's answer
    for (const [name, value] of new FormData(form)) {
      if (hidden.has(name) || typeof value !== "string" || value === "") continue;
      const [key, j] = name.split(".");
      if (j && has(design, key)) {
        (ticks[key] = ticks[key] || [])[Number(j)] = { y: 1, n: 0 }[value];
      } else {
        if (has(answers, name)) throw new Error("two answers for " + name);
        answers[name] = value;
      }
    }
    // In the order the questions are written, whatever order the page showed them in:
    // the request says nothing about that order (domain/display_order.py).
    for (const key of JSON.parse(form.dataset.questions)) {
      if (has(na, key)) {
        add(key, na[key]);
      } else if (has(design, key) && ticks[key]) {
        add(key, R.wire(design[key], Array.from(ticks[key]).join(""))); // throws unless k bits
      } else if (has(design, key) && has(answers, key)) {
        add(key, R.wire(design[key], answers[key]));
      } else if (has(answers, key)) {
        const input = form.querySelector(`[name="${key}"]:enabled`);
        add(key, input && input.type === "number" ? R.pad(answers[key]) : answers[key]); // plain
      }
    }
    add("randomized", "client");
    return out;
  }

  function onSubmit(event, design) {
    const form = event.currentTarget;
    if (!form.checkValidity()) return; // the browser points at what is missing
    if (form.querySelector('[name="sections-carried"]')) return; // a section: the server's
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
      form.dispatchEvent(new Event("randomizing", { bubbles: true })); // before our submit
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
