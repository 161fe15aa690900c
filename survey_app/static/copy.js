/*
 * The "Copy" buttons beside a survey's address (templates/research/_survey_address.html).
 * Without JavaScript the buttons stay hidden and the address is plain, selectable text.
 * The Clipboard API exists only on HTTPS and localhost; elsewhere the address is selected
 * and copied the old way.
 */
(function () {
  "use strict";

  function copyText(target) {
    const text = target.textContent.trim();
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    const range = document.createRange();
    range.selectNodeContents(target);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    return document.execCommand("copy") ? Promise.resolve() : Promise.reject(new Error("copy"));
  }

  function showCopied(button) {
    const status = document.getElementById(button.getAttribute("aria-describedby"));
    button.classList.add("copied");
    if (status) status.textContent = button.dataset.copied;
  }

  for (const button of document.querySelectorAll("button[data-copy]")) {
    const target = document.getElementById(button.dataset.copy);
    if (!target) continue;
    button.hidden = false;
    button.addEventListener("click", () => {
      copyText(target).then(() => showCopied(button), () => {});
    });
  }
})();
