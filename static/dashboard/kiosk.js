/* Kiosk mode: must keep running unattended on a wall display for weeks.
 * - app.js keeps polling with back-off; here, after 3 failed polls in a row, a banner shows and a
 *   probe fetches the page until the dashboard answers again, then the page reloads in full (new
 *   static files after an upgrade, fresh DOM after a long outage).
 * - Every 6 hours the page reloads in full anyway (only after a successful probe, so a reload never
 *   lands on a browser error page).
 */
(function () {
  "use strict";

  var banner = document.getElementById("kiosk-offline");
  var probing = false;
  var PROBE_MAX = 60000;

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
    if (banner) banner.hidden = false;
    if (evt.detail.failures >= 3 && !probing) {
      probing = true;
      probe(3000, function () { window.location.reload(); });
    }
  });
  document.addEventListener("vui:poll-recovered", function () {
    if (banner) banner.hidden = true;
  });

  window.setInterval(function () {
    probe(5000, function () { window.location.reload(); });
  }, 6 * 3600 * 1000);
})();
