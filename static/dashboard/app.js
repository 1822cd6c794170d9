/* volcano-ui page behaviour. No inline scripts anywhere: this file and kiosk.js are all there is.
 *
 * Live fragments: every element with [data-poll] has hx-get/hx-trigger="vui:poll" (see the
 * `poll` template tag). This driver fires that event on a timer, adaptively:
 *   - paused while the tab is hidden, refreshed at once when it becomes visible again;
 *   - after failed rounds (dashboard restarting, network lost, a 5xx) the interval doubles up to
 *     30 s (at least a 503's Retry-After), polling never stops for an error, and the interval goes
 *     back to normal after the first success.
 * The server answers 204 (no swap) when a fragment's ?v= version is unchanged.
 *
 * A poll answered 404 with the X-Volcano-Gone header means the page's object (Job, PodGroup,
 * Queue, Pod) is not in the dashboard's synced cache while its permissions are known. One such
 * answer is asked again after the normal interval; when the next poll confirms it, the object was
 * deleted or renamed: the page shows the response's notice ("no longer exists; last known state")
 * in #gone-notice, marks the live dot, and stops polling for good.
 */
(function () {
  "use strict";

  var body = document.body;
  var base = Math.max(1, parseFloat(body.getAttribute("data-poll-seconds") || "2")) * 1000;
  var delay = base;
  var failures = 0;
  var timer = null;
  var gone = false;
  var goneSeen = 0;
  var round = 0;
  var failedRound = -1;
  var goneRound = -1;

  function pollNow() {
    if (document.hidden || !window.htmx) return;
    round += 1;
    var els = document.querySelectorAll("[data-poll]");
    for (var i = 0; i < els.length; i++) {
      window.htmx.trigger(els[i], "vui:poll");
    }
  }

  function schedule() {
    window.clearTimeout(timer);
    if (document.hidden || gone) return;
    timer = window.setTimeout(function () {
      pollNow();
      schedule();
    }, delay);
  }

  function isPoll(evt) {
    var elt = evt.detail && evt.detail.elt;
    return !!(elt && elt.hasAttribute && elt.hasAttribute("data-poll"));
  }

  function objectGone(xhr) {
    gone = true;
    window.clearTimeout(timer);
    var polled = document.querySelectorAll("[data-poll]");
    for (var i = 0; i < polled.length; i++) {
      polled[i].removeAttribute("data-poll");
    }
    var holder = document.getElementById("gone-notice");
    if (holder && holder.hidden) {
      // Server-rendered and escaped (templates/dashboard/_gone.html); no scripts in it.
      holder.innerHTML = xhr.responseText;
      holder.hidden = false;
    }
    body.classList.remove("is-offline");
    body.classList.add("is-gone");
    document.dispatchEvent(new CustomEvent("vui:object-gone"));
  }

  function failed(evt) {
    if (!isPoll(evt)) return;
    var xhr = evt.detail.xhr;
    if (xhr && xhr.status === 404 && xhr.getResponseHeader("X-Volcano-Gone")) {
      // Counted once per round: every fragment of the page answers the same.
      if (goneRound !== round) {
        goneRound = round;
        goneSeen += 1;
      }
      if (goneSeen >= 2) {
        objectGone(xhr);
      } else {
        delay = base;
        schedule();
      }
      return;
    }
    // One failure per polling round, however many fragments the page polls.
    if (failedRound === round) return;
    failedRound = round;
    goneSeen = 0;
    failures += 1;
    delay = Math.min(base * Math.pow(2, failures), 30000);
    var retryAfter = xhr ? parseFloat(xhr.getResponseHeader("Retry-After") || "") : NaN;
    if (retryAfter > 0) delay = Math.max(delay, Math.min(retryAfter * 1000, 60000));
    body.classList.add("is-offline");
    document.dispatchEvent(new CustomEvent("vui:poll-failed", { detail: { failures: failures } }));
    schedule();
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden || gone) {
      window.clearTimeout(timer);
    } else {
      pollNow();
      schedule();
    }
  });
  body.addEventListener("htmx:sendError", failed);
  body.addEventListener("htmx:responseError", failed);
  body.addEventListener("htmx:timeout", failed);
  body.addEventListener("htmx:afterRequest", function (evt) {
    if (!isPoll(evt) || !evt.detail.successful) return;
    goneSeen = 0;
    if (failures) {
      failures = 0;
      delay = base;
      body.classList.remove("is-offline");
      document.dispatchEvent(new CustomEvent("vui:poll-recovered"));
      schedule();
    }
  });
  if (window.htmx) {
    // A poll must not hang forever on a dead connection.
    window.htmx.config.timeout = Math.max(10000, base * 5);
  }
  schedule();

  /* A fragment refresh re-renders its <details> as the server writes them (the events table
     folded on a pending gang's page, an event's variants): those with a data-key keep the state
     the user gave them. */
  var detailsState = {};
  document.addEventListener("toggle", function (evt) {
    var el = evt.target;
    if (el && el.tagName === "DETAILS" && el.hasAttribute("data-key")) {
      detailsState[el.getAttribute("data-key")] = el.open;
    }
  }, true);
  body.addEventListener("htmx:afterSettle", function () {
    var all = document.querySelectorAll("details[data-key]");
    for (var i = 0; i < all.length; i++) {
      var key = all[i].getAttribute("data-key");
      if (Object.prototype.hasOwnProperty.call(detailsState, key)) all[i].open = detailsState[key];
    }
  });

  /* Theme toggle: flips html[data-theme] at once and remembers it in a cookie the server reads
     (so the next page renders in that theme with no flash). The link also works without JS. */
  var toggle = document.getElementById("theme-toggle");
  if (toggle) {
    toggle.addEventListener("click", function (evt) {
      evt.preventDefault();
      var root = document.documentElement;
      var current = root.getAttribute("data-theme") ||
        (window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
      var next = current === "dark" ? "light" : "dark";
      root.setAttribute("data-theme", next);
      document.cookie = "vui_theme=" + next + "; path=/; max-age=31536000; samesite=lax";
      try { window.localStorage.setItem("vui_theme", next); } catch (e) { /* storage may be disabled */ }
    });
  }

  /* Language: submit the set_language form as soon as a language is picked. */
  var selects = document.querySelectorAll("select[data-autosubmit]");
  for (var i = 0; i < selects.length; i++) {
    selects[i].addEventListener("change", function (evt) {
      var form = evt.target.form;
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    });
  }
})();
