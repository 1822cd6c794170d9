/* volcano-ui relative times: keeps every <time data-rel> ("5m", "5m ago") current in the browser.
 *
 * The server renders the text for the moment of rendering (it stays right without JavaScript) and
 * a fragment's version does not change with time, so an unchanged fragment is never re-sent just
 * because its ages moved. This script re-renders those texts every TICK_MS with the server's own
 * formats (the script tag's data-words, in the page's language) against the server's clock: the
 * pages' "now" is the cluster's, which need not be the browser's. data-now (epoch ms) gives the
 * offset at page load; every htmx answer's X-Volcano-Now header (204s included) renews it.
 *
 * data-rel="in" marks a time meant to be ahead (a CronJob's next run): "in 5d", never clock skew.
 *
 * A timestamp further ahead than the clock skew allowance is shown as absolute time with
 * "(clock skew?)" inside [data-rel-skew]; once it is within the allowance the wrapper becomes a
 * relative time like the others.
 */
(function () {
  "use strict";

  var TICK_MS = 15000;
  var script = document.currentScript;
  var words = {};
  try {
    words = JSON.parse((script && script.getAttribute("data-words")) || "{}");
  } catch (e) {
    words = {};
  }
  var skewMs = (parseFloat(words.skew) || 0) * 1000;
  var serverNow = parseInt((script && script.getAttribute("data-now")) || "", 10);
  var offset = isNaN(serverNow) ? 0 : serverNow - Date.now();

  function fmt(pattern, values) {
    return String(pattern || "").replace(/%\((\w+)\)[ds]/g, function (_m, key) {
      return String(values[key]);
    });
  }

  // The same steps as dashboard.templatetags.volcano.short_duration.
  function shortDuration(seconds) {
    var s = Math.floor(Math.max(0, seconds));
    if (s < 60) return fmt(words.s, { n: s });
    var m = Math.floor(s / 60);
    if (m < 10 && s % 60) return fmt(words.ms, { m: m, s: s % 60 });
    if (m < 60) return fmt(words.m, { n: m });
    var h = Math.floor(m / 60);
    m = m % 60;
    if (h < 24) return m && h < 10 ? fmt(words.hm, { h: h, m: m }) : fmt(words.h, { n: h });
    var d = Math.floor(h / 24);
    h = h % 24;
    if (d < 10 && h) return fmt(words.dh, { d: d, h: h });
    return fmt(words.d, { n: d });
  }

  // rel "in": a time meant to be ahead (a CronJob's next run), "in 5d", and "5m ago" once passed.
  function text(ms, rel) {
    if (rel === "in") {
      return ms < 0 ? fmt(words["in"], { t: shortDuration(-ms / 1000) }) : fmt(words.ago, { t: shortDuration(ms / 1000) });
    }
    if (ms < 0) return words.now;
    var t = shortDuration(ms / 1000);
    return rel === "ago" ? fmt(words.ago, { t: t }) : t;
  }

  function tick() {
    if (!words.s) return;
    var now = Date.now() + offset;
    var skewed = document.querySelectorAll("[data-rel-skew]");
    for (var i = 0; i < skewed.length; i++) {
      var w = skewed[i];
      var at = Date.parse(w.getAttribute("data-datetime"));
      if (isNaN(at) || at - now > skewMs) continue;
      var el = document.createElement("time");
      el.setAttribute("datetime", w.getAttribute("data-datetime"));
      el.setAttribute("title", w.getAttribute("data-title") || "");
      el.setAttribute("data-rel", w.getAttribute("data-rel-skew"));
      w.replaceWith(el);
    }
    var els = document.querySelectorAll("time[data-rel]");
    for (var j = 0; j < els.length; j++) {
      var t = Date.parse(els[j].getAttribute("datetime"));
      if (isNaN(t)) continue;
      var next = text(now - t, els[j].getAttribute("data-rel"));
      if (next && els[j].textContent !== next) els[j].textContent = next;
    }
  }

  document.addEventListener("htmx:afterRequest", function (evt) {
    var xhr = evt.detail && evt.detail.xhr;
    var header = xhr && xhr.getResponseHeader && xhr.getResponseHeader("X-Volcano-Now");
    var value = parseInt(header || "", 10);
    if (!isNaN(value)) offset = value - Date.now();
  });
  // A swapped-in fragment was rendered for its version, possibly a while ago: re-render its ages.
  document.addEventListener("htmx:afterSettle", tick);
  window.setInterval(tick, TICK_MS);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", tick);
  } else {
    tick();
  }
})();
