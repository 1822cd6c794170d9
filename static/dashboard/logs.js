// Live follow of a log page: polls the same URL with ?after=<last timestamp> while the tab is
// visible, appends the (server-escaped) lines, and stops when the server says the container ended
// (X-Log-Ended) or after data-follow-seconds.
(function () {
  "use strict";
  function start() {
    var pre = document.getElementById("log-lines");
    if (!pre || pre.dataset.follow !== "1") return;
    var box = document.querySelector("[data-log-follow]");
    var status = document.querySelector("[data-log-status]");
    var seconds = parseInt(document.body.dataset.pollSeconds || "2", 10) * 1000;
    var deadline = Date.now() + parseInt(pre.dataset.followSeconds || "900", 10) * 1000;
    var timer = null;
    function say(text) { if (status) status.textContent = text || ""; }
    function stop(text) { if (timer) clearInterval(timer); timer = null; say(text); if (box) { box.checked = false; box.disabled = true; } }
    function tick() {
      if (document.visibilityState !== "visible" || (box && !box.checked)) return;
      if (Date.now() > deadline) { stop(pre.dataset.timeoutText); return; }
      var url = new URL(window.location.href);
      url.searchParams.delete("download");
      if (!pre.dataset.after) return;
      url.searchParams.set("after", pre.dataset.after);
      fetch(url.toString(), { headers: { "X-Log-Poll": "1" }, credentials: "same-origin" }).then(function (resp) {
        if (!resp.ok) { say(pre.dataset.errorText); return null; }
        return resp.text().then(function (html) {
          var atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
          if (html) pre.insertAdjacentHTML("beforeend", html);
          if (atBottom) pre.scrollTop = pre.scrollHeight;
          pre.dataset.after = resp.headers.get("X-Log-After") || pre.dataset.after;
          if (resp.headers.get("X-Log-Busy")) say(pre.dataset.busyText); else say("");
          if (resp.headers.get("X-Log-Ended")) stop(pre.dataset.endedText);
        });
      }).catch(function () { say(pre.dataset.errorText); });
    }
    timer = setInterval(tick, seconds);
    pre.scrollTop = pre.scrollHeight;
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
