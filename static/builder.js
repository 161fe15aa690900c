/* The survey builder's live preview (templates/research/builder.html).
 *
 * The page works without this script: its buttons post the form and the server answers
 * with the preview. With it, the fields of a question's type show as the type changes,
 * and the preview follows the form as the researcher types: the form is posted (with
 * its CSRF token) to the preview address, at most every half second, and the answer,
 * an HTML fragment of our own, replaces the panel. The status line says so politely to
 * screen readers. No answer is ever sent anywhere: the preview has no working form.
 */
(function () {
  "use strict";
  var form = document.getElementById("builder-form");
  var panel = document.getElementById("preview-panel");
  var status = document.getElementById("preview-status");
  if (!form || !panel || !status || !window.fetch || !window.FormData) {
    return;
  }
  var DELAY_MS = 500;
  var timer = null;
  var latest = 0;

  function showFieldsOf(question) {
    var type = question.querySelector('[data-role="type"]').value;
    var sensitive = question.querySelector('[data-role="sensitive"]');
    var randomized = type === "yes_no" || !sensitive || sensitive.checked;
    question.querySelectorAll("[data-types]").forEach(function (part) {
      part.hidden = part.getAttribute("data-types").split(" ").indexOf(type) < 0;
    });
    question.querySelectorAll("[data-randomized]").forEach(function (part) {
      part.hidden = !randomized;
    });
  }

  function clearErrors() {
    var summary = document.getElementById("builder-errors");
    if (summary) {
      summary.remove();
    }
    form.querySelectorAll(".field-error").forEach(function (message) {
      message.remove();
    });
    form.querySelectorAll(".field.invalid").forEach(function (field) {
      field.classList.remove("invalid");
    });
    form.querySelectorAll('[aria-invalid="true"]').forEach(function (input) {
      input.removeAttribute("aria-invalid");
      var ids = (input.getAttribute("aria-describedby") || "").split(" ").filter(function (id) {
        return id && !/-error$/.test(id);
      });
      if (ids.length) {
        input.setAttribute("aria-describedby", ids.join(" "));
      } else {
        input.removeAttribute("aria-describedby");
      }
    });
  }

  /* The import's first problem, next to the field it names, as a full post would show it. */
  function markError() {
    clearErrors();
    var missing = panel.querySelector("[data-error-field]");
    var input = missing && document.getElementById(missing.getAttribute("data-error-field"));
    var text = missing && missing.querySelector("[data-message]");
    if (!input || !text) {
      return false;
    }
    var message = document.createElement("p");
    message.className = "field-error";
    message.id = input.id + "-error";
    message.textContent = text.textContent;
    var field = input.closest(".field");
    if (field) {
      field.classList.add("invalid");
      field.appendChild(message);
    } else {
      input.insertAdjacentElement("afterend", message);
    }
    input.setAttribute("aria-invalid", "true");
    var described = input.getAttribute("aria-describedby");
    input.setAttribute("aria-describedby", (described ? described + " " : "") + message.id);
    return true;
  }

  function refresh() {
    var request = ++latest;
    status.textContent = status.getAttribute("data-updating");
    fetch(form.getAttribute("data-preview-url"), {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "X-Requested-With": "fetch" },
    })
      .then(function (response) {
        if (!response.ok || response.redirected) {
          throw new Error("preview refused: " + response.status);
        }
        return response.text();
      })
      .then(function (html) {
        if (request !== latest) {
          return; // a newer edit's preview is on its way
        }
        panel.innerHTML = html;
        var invalid = markError();
        status.textContent = status.getAttribute(invalid ? "data-invalid" : "data-updated");
      })
      .catch(function () {
        if (request === latest) {
          status.textContent = status.getAttribute("data-failed");
        }
      });
  }

  function schedule() {
    window.clearTimeout(timer);
    timer = window.setTimeout(refresh, DELAY_MS);
  }

  form.querySelectorAll("[data-question]").forEach(showFieldsOf);
  form.addEventListener("change", function (event) {
    var question = event.target.closest("[data-question]");
    if (question) {
      showFieldsOf(question);
    }
  });
  form.addEventListener("input", schedule);
  form.addEventListener("change", schedule);
  // The preview settings live outside the form (form="builder-form") but belong to it.
  document.querySelectorAll('[form="builder-form"]').forEach(function (control) {
    control.addEventListener("input", schedule);
    control.addEventListener("change", schedule);
  });
})();
