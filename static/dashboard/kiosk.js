/* Kiosk mode: must keep running unattended on a wall display for weeks.
 * - app.js keeps polling with back-off; here, after 3 failed polls in a row, a banner shows and a
 *   probe fetches the page until the dashboard answers again, then the page reloads in full (new
 *   static files after an upgrade, fresh DOM after a long outage).
 * - Every 6 hours the page reloads in full anyway (only after a successful probe, so a reload never
 *   lands on a browser error page).
 * - Fit: the server sends more rows than the smallest screen holds, those beyond its cut with the
 *   `hidden` attribute (dashboard/views/kiosk.py KIOSK_*: without script the page shows that cut).
 *   Here the lists of each column (Needs attention's groups, the queue table, Recent warnings)
 *   show, in the server's order of importance, as many rows as the column holds on this screen,
 *   and each "+ N more" line takes the server's text for that cut (data-cuts: item k is [N, text]
 *   when k + 1 rows show). Run at load, after every swap and on resize.
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
    // The banner takes a line of the header: the lists below are fitted again.
    if (b && b.hidden) { b.hidden = false; fitSoon(); }
    if (evt.detail.failures >= 3 && !probing) {
      probing = true;
      probe(3000, function () { window.location.reload(); });
    }
  });
  document.addEventListener("vui:poll-recovered", function () {
    var b = banner();
    if (b && !b.hidden) { b.hidden = true; fitSoon(); }
  });

  window.setInterval(function () {
    probe(5000, function () { window.location.reload(); });
  }, 6 * 3600 * 1000);

  /* --- fit ------------------------------------------------------------------------------- */

  function overflows(el) {
    return el.scrollHeight > el.clientHeight + 1;
  }

  function cuts(el) {
    try { return JSON.parse(el.getAttribute("data-cuts") || "[]"); } catch (e) { return []; }
  }

  // data-cuts item k is for k + 1 rows shown, or for k rows with data-cuts-from="0".
  function setMore(el, texts, shown) {
    var cut = texts[el.getAttribute("data-cuts-from") === "0" ? shown : shown - 1] || [0, ""];
    el.textContent = cut[1];
    el.hidden = !cut[1];
    el.setAttribute("data-more", String(cut[0]));
  }

  function all(root, sel) { return Array.prototype.slice.call(root.querySelectorAll(sel)); }

  // A list of li items in importance order with its "+ N more" line (an attention group, the warnings).
  function itemList(items, more, el) {
    var texts = cuts(more);
    return {
      el: el || null,
      size: items.length,
      min: more.getAttribute("data-cuts-from") === "0" ? 0 : 1,
      show: function (k) {
        items.forEach(function (li, i) { li.hidden = i >= k; });
        setMore(more, texts, k);
      }
    };
  }

  // The queue table: rows by data-rank; a cut to k shows ranks 0..k-1, and a row whose parent is
  // shown drops its path.
  function queueList(panel) {
    var more = panel.querySelector(".kiosk-more[data-cuts]");
    var rows = all(panel, "tr[data-rank]");
    if (!more || !rows.length) return null;
    var texts = cuts(more);
    var byName = {};
    rows.forEach(function (r) { byName[r.getAttribute("data-queue")] = r; });
    return {
      size: rows.length,
      // The problem queues rank first and show before any other list grows (data-first).
      first: Math.min(rows.length, +more.getAttribute("data-first") || 1),
      show: function (k) {
        rows.forEach(function (r) { r.hidden = +r.getAttribute("data-rank") >= k; });
        rows.forEach(function (r) {
          var path = r.querySelector(".kq-path");
          if (!path) return;
          var parent = byName[r.getAttribute("data-parent")];
          path.hidden = !!(parent && !parent.hidden);
        });
        setMore(more, texts, k);
      }
    };
  }

  function columnLists(col) {
    var out = [];
    all(col, ".att-group").forEach(function (g) {
      var items = all(g, ".att-list > li");
      var more = g.querySelector(".kiosk-more[data-cuts]");
      if (items.length && more) out.push(itemList(items, more, g));
    });
    var q = col.querySelector('[data-panel="queues"]');
    var ql = q && queueList(q);
    if (ql) out.push(ql);
    var w = col.querySelector('[data-panel="warnings"]');
    if (w) {
      var items = all(w, ".kiosk-events > li");
      var more = w.querySelector(".kiosk-more[data-cuts]");
      if (items.length && more) out.push(itemList(items, more));
    }
    return out;
  }

  // One column: every list keeps its first row; the room left goes to the lists in turn, one
  // row each round (as views.kiosk counts lines for the no-script cut), until the column or a
  // panel of it would overflow. A list that runs out leaves the rest to the others.
  function fitColumn(col) {
    var lists = columnLists(col);
    if (!lists.length) return;
    var boxes = [col].concat(all(col, "[data-panel]"));
    function over() { return boxes.some(overflows); }
    lists.forEach(function (l) {
      if (l.el) l.el.hidden = false;
      l.shown = 1;
      l.done = false;
      l.show(1);
    });
    lists.forEach(function (l) {
      while (l.first && l.shown < l.first) {
        l.show(l.shown + 1);
        if (over()) { l.show(l.shown); break; }
        l.shown += 1;
      }
    });
    // Too short even for that: the lists that may show none (Recent warnings) give way, then the
    // least important lists (the last ones) show no row (their heading keeps the count), then
    // their headings go too: a row is left out whole, never cut at the screen's edge.
    lists.forEach(function (l) {
      if (l.min === 0 && over()) { l.shown = 0; l.show(0); }
    });
    for (var i = lists.length - 1; i >= 0 && over(); i--) {
      lists[i].shown = 0;
      lists[i].done = true;
      lists[i].show(0);
    }
    for (var j = lists.length - 1; j >= 0 && over(); j--) {
      if (lists[j].el) lists[j].el.hidden = true;
    }
    var grew = true;
    while (grew) {
      grew = false;
      lists.forEach(function (l) {
        if (l.done || l.shown >= l.size) return;
        l.shown += 1;
        l.show(l.shown);
        if (over()) {
          l.shown -= 1;
          l.show(l.shown);
          l.done = true;
        } else {
          grew = true;
        }
      });
    }
  }

  function fit() {
    all(document, ".kiosk-col").forEach(fitColumn);
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
