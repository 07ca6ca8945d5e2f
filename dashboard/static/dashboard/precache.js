// Image cache job page: while the job runs, fetch its progress fragment every
// second and swap it in (no full reload); stop once the job has finished.
(function () {
  "use strict";

  function paintBars(root) {
    root.querySelectorAll(".bar > span[data-percent]").forEach(function (bar) {
      bar.style.width = Math.max(0, Math.min(100, Number(bar.getAttribute("data-percent")) || 0)) + "%";
    });
  }

  function finished(root) {
    var progress = root.querySelector("#job-progress");
    return !progress || progress.getAttribute("data-finished") === "1";
  }

  function start(live) {
    var url = live.getAttribute("data-poll-url");
    var delay = 1000;
    paintBars(live);
    function poll() {
      fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.text();
        })
        .then(function (html) {
          live.innerHTML = html;
          paintBars(live);
          delay = 1000;
          if (!finished(live)) window.setTimeout(poll, delay);
        })
        .catch(function () {
          delay = Math.min(delay * 2, 15000); // the server is busy or gone: back off, keep trying
          window.setTimeout(poll, delay);
        });
    }
    if (!finished(live)) window.setTimeout(poll, delay);
  }

  function init() {
    document.querySelectorAll("[data-poll-url]").forEach(start);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
