/* Kiosk mode: must keep running unattended on a wall display for weeks.
 * - app.js keeps polling with back-off; here, after 3 failed polls in a row, a banner shows and a
 *   probe fetches the page until the dashboard answers again, then the page reloads in full (new
 *   static files after an upgrade, fresh DOM after a long outage).
 * - Every 6 hours the page reloads in full anyway (only after a successful probe, so a reload never
 *   lands on a browser error page).
 * - Fit: the server sends more rows than the smallest screen holds, those beyond its cut with the
 *   `hidden` attribute (dashboard/views.py KIOSK_*: without script the page shows that cut).
 *   Here each list shows, in the server's order of importance, as many rows as its panel holds
 *   on this screen, and its "+ N more" line takes the server's text for that cut (data-cuts:
 *   item k is [N, text] when k + 1 rows show). Run at load, after every swap and on resize.
 */
(function () {
  "use strict";

  var probing = false;
  var PROBE_MAX = 60000;

  function banner() {
    // Inside the polled board (its header), so looked up each time.
    return document.getElementById("kiosk-offline");
  }

  function probe(wait, onOk) {
    window.fetch(window.location.href, { cache: "no-store", credentials: "same-origin" }).then(
      function (resp) {
        if (resp.ok) { onOk(); } else { retry(); }
      },
      retry
    );
    function retry() {
      window.setTimeout(function () { probe(Math.min(wait * 1.5, PROBE_MAX), onOk); }, wait);
    }
  }

  document.addEventListener("vui:poll-failed", function (evt) {
    var b = banner();
    if (b) b.hidden = false;
    if (evt.detail.failures >= 3 && !probing) {
      probing = true;
      probe(3000, function () { window.location.reload(); });
    }
  });
  document.addEventListener("vui:poll-recovered", function () {
    var b = banner();
    if (b) b.hidden = true;
  });

  window.setInterval(function () {
    probe(5000, function () { window.location.reload(); });
  }, 6 * 3600 * 1000);

  /* --- fit ------------------------------------------------------------------------------- */

  function overflows(panel) {
    return panel.scrollHeight > panel.clientHeight + 1;
  }

  function cuts(el) {
    try { return JSON.parse(el.getAttribute("data-cuts") || "[]"); } catch (e) { return []; }
  }

  function setMore(el, texts, shown) {
    var cut = texts[shown - 1] || [0, ""];
    el.textContent = cut[1];
    el.hidden = !cut[1];
    el.setAttribute("data-more", String(cut[0]));
  }

  // The queue table: rows by data-rank; a cut to k shows ranks 0..k-1. The largest k whose
  // panel does not overflow, by bisection (overflow grows with k).
  function fitQueues(panel) {
    var more = panel.querySelector(".kiosk-more[data-cuts]");
    var rows = Array.prototype.slice.call(panel.querySelectorAll("tr[data-rank]"));
    if (!more || !rows.length) return;
    var texts = cuts(more);
    var byName = {};
    rows.forEach(function (r) { byName[r.getAttribute("data-queue")] = r; });
    function show(k) {
      rows.forEach(function (r) { r.hidden = +r.getAttribute("data-rank") >= k; });
      rows.forEach(function (r) {
        var path = r.querySelector(".kq-path");
        if (!path) return;
        var parent = byName[r.getAttribute("data-parent")];
        path.hidden = !!(parent && !parent.hidden);
      });
      setMore(more, texts, k);
    }
    var lo = 1, hi = rows.length;
    show(hi);
    if (!overflows(panel)) return;
    while (lo < hi) {
      var mid = Math.ceil((lo + hi) / 2);
      show(mid);
      if (overflows(panel)) { hi = mid - 1; } else { lo = mid; }
    }
    show(lo);
  }

  // "Needs attention": every group keeps its first item; the room left goes to the groups in
  // turn, one item each round (as views.kiosk_attention counts lines for the no-script cut).
  function fitAttention(panel) {
    var groups = Array.prototype.slice.call(panel.querySelectorAll(".att-group")).map(function (g) {
      return {
        items: Array.prototype.slice.call(g.querySelectorAll(".att-list > li")),
        more: g.querySelector(".kiosk-more[data-cuts]"),
        shown: 1,
        done: false
      };
    }).filter(function (g) { return g.items.length && g.more; });
    if (!groups.length) return;
    groups.forEach(function (g) { g.texts = cuts(g.more); });
    function show(g, k) {
      g.shown = k;
      g.items.forEach(function (li, i) { li.hidden = i >= k; });
      setMore(g.more, g.texts, k);
    }
    groups.forEach(function (g) { show(g, 1); });
    var grew = true;
    while (grew) {
      grew = false;
      groups.forEach(function (g) {
        if (g.done || g.shown >= g.items.length) return;
        show(g, g.shown + 1);
        if (overflows(panel)) {
          show(g, g.shown - 1);
          g.done = true;
        } else {
          grew = true;
        }
      });
    }
  }

  function fit() {
    var att = document.querySelector('[data-panel="attention"]');
    if (att) fitAttention(att);
    var queues = document.querySelector('[data-panel="queues"]');
    if (queues) fitQueues(queues);
    document.documentElement.setAttribute("data-kiosk-fit", String((+document.documentElement.getAttribute("data-kiosk-fit") || 0) + 1));
  }

  var pending = false;
  function fitSoon() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; fit(); });
  }

  // After a swap, before the browser paints it: no frame with the no-script cut.
  document.body.addEventListener("htmx:afterSwap", fit);
  window.addEventListener("resize", fitSoon);
  window.addEventListener("load", fitSoon);
  fit();
})();
