// Capacity headroom on the aggregate and zones pages: each [data-headroom-url]
// box loads its figures as a fragment once the page is shown (one at a time,
// so that a page of many zones does not ask placement for all at once). The
// page works without it: the box links to the same figures as a page.
(function () {
  "use strict";

  function paintBars(root) {
    root.querySelectorAll(".bar > span[data-percent]").forEach(function (bar) {
      bar.style.width = Math.max(0, Math.min(100, Number(bar.getAttribute("data-percent")) || 0)) + "%";
    });
  }

  function load(box) {
    var body = box.querySelector(".headroom-body") || box;
    box.setAttribute("aria-busy", "true");
    body.innerHTML = '<p class="small muted">Computing the headroom…</p>';
    return fetch(box.getAttribute("data-headroom-url"), {
      credentials: "same-origin",
      headers: { Accept: "text/html", "X-Console-Fragment": "headroom" }
    })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        body.innerHTML = html;
        paintBars(body);
        box.setAttribute("data-loaded", "1");
      })
      .catch(function (error) {
        body.innerHTML = "";
        var p = document.createElement("p");
        p.className = "alert warning";
        p.textContent = "The headroom could not be computed (" + error.message + "). ";
        var link = document.createElement("a");
        link.href = box.getAttribute("data-headroom-url");
        link.textContent = "Try again on its own page";
        p.appendChild(link);
        body.appendChild(p);
        box.setAttribute("data-loaded", "error");
      })
      .then(function () { box.removeAttribute("aria-busy"); });
  }

  function init() {
    var boxes = Array.prototype.slice.call(document.querySelectorAll("[data-headroom-url]"));
    boxes.reduce(function (previous, box) {
      return previous.then(function () { return load(box); });
    }, Promise.resolve());
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
