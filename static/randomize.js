/*
 * Two-coin randomized response in the browser (DESIGN.md, privacy invariant 2).
 *
 * On submit, each answer goes through two fair coins flipped with
 * crypto.getRandomValues, one random bit per coin, no floating point:
 *   first coin:  1 = keep the true answer, 0 = let the second coin answer;
 *   second coin: 1 = "yes", 0 = "no".
 * Only the results are sent, in a new form that carries the form's hidden fields
 * (CSRF token, submission id, invitation), the randomized answers and
 * randomized=client. The form the respondent filled in is never submitted, so the
 * true answers never leave the page.
 *
 * Without crypto.getRandomValues nothing is intercepted: the form posts as it is
 * and the server randomizes, exactly as with JavaScript off.
 */
(function () {
  "use strict";

  function randomBit() {
    var byte = new Uint8Array(1);
    window.crypto.getRandomValues(byte);
    return byte[0] & 1;
  }

  function randomizeAnswer(trueAnswer) {
    if (randomBit() === 1) {
      return trueAnswer;
    }
    return randomBit() === 1 ? "yes" : "no";
  }

  function hiddenInput(name, value) {
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    return input;
  }

  function questionKeys(form) {
    var keys = [];
    form.querySelectorAll('input[type="radio"]').forEach(function (radio) {
      if (keys.indexOf(radio.name) === -1) {
        keys.push(radio.name);
      }
    });
    return keys;
  }

  function randomizedForm(form) {
    var out = document.createElement("form");
    out.method = "post";
    out.action = form.action;
    out.hidden = true;
    // The form's own hidden fields: CSRF token, submission id, invitation if any.
    form.querySelectorAll('input[type="hidden"]').forEach(function (input) {
      out.appendChild(hiddenInput(input.name, input.value));
    });
    questionKeys(form).forEach(function (key) {
      var chosen = form.querySelector('input[name="' + key + '"]:checked');
      out.appendChild(hiddenInput(key, randomizeAnswer(chosen.value)));
    });
    out.appendChild(hiddenInput("randomized", "client"));
    return out;
  }

  function onSubmit(event) {
    var form = event.currentTarget;
    if (!form.checkValidity()) {
      return; // the browser points at the unanswered question
    }
    event.preventDefault();
    var out = randomizedForm(form);
    document.body.appendChild(out);
    form.querySelector('button[type="submit"]').disabled = true;
    out.submit();
  }

  function start() {
    if (!window.crypto || !window.crypto.getRandomValues) {
      return;
    }
    document.querySelectorAll('form[data-randomize="two-coin"]').forEach(function (form) {
      form.addEventListener("submit", onSubmit);
    });
    document.querySelectorAll(".js-only").forEach(function (element) {
      element.hidden = false;
    });
  }

  start();
})();
