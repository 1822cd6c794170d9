/* Copy buttons ({% copy_button %}, dashboard/templatetags/volcano_copy.py): shown only when this
   script runs; a click copies the button's data-copy text (the Clipboard API, else a selected
   textarea and execCommand for pages served over plain http to another host). */
(function () {
  "use strict";

  function reveal(root) {
    root.querySelectorAll("button.copy-btn[hidden]").forEach(function (b) { b.hidden = false; });
  }

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "copy-scratch";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }

  function done(button, ok) {
    var label = button.getAttribute("data-copied-label") || "Copied";
    var title = button.getAttribute("title");
    button.setAttribute("data-copied", ok ? "1" : "0");
    if (ok) { button.setAttribute("title", label); }
    window.setTimeout(function () {
      button.removeAttribute("data-copied");
      if (title) { button.setAttribute("title", title); }
    }, 1500);
  }

  document.addEventListener("click", function (ev) {
    var button = ev.target.closest && ev.target.closest("button.copy-btn[data-copy]");
    if (!button) { return; }
    ev.preventDefault();
    var text = button.getAttribute("data-copy");
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        function () { done(button, true); },
        function () { done(button, fallbackCopy(text)); }
      );
    } else {
      done(button, fallbackCopy(text));
    }
  });

  document.addEventListener("DOMContentLoaded", function () { reveal(document); });
  // Fragments swapped in by htmx bring their own hidden buttons.
  document.addEventListener("htmx:afterSettle", function (ev) { reveal(ev.target || document); });
})();
