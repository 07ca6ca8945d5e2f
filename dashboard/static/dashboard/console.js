// Progressive enhancement of the console: every page works without it.
(function () {
  "use strict";

  // Forms with data-confirm ask before submitting.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  });

  // Swap in new content; boxes the operator had checked stay checked.
  function replaceKeepingChecks(target, html) {
    var checked = Array.prototype.map.call(target.querySelectorAll("input[type=checkbox]:checked"),
      function (box) { return box.name + "=" + box.value; });
    target.innerHTML = html;
    target.querySelectorAll("input[type=checkbox]").forEach(function (box) {
      if (!box.disabled && checked.indexOf(box.name + "=" + box.value) !== -1) { box.checked = true; }
    });
  }

  // Search forms with data-live-target refresh that element as the operator types.
  function liveSearch(form) {
    var target = document.querySelector(form.getAttribute("data-live-target"));
    var url = form.getAttribute("data-live-url");
    var timer = null;
    form.addEventListener("input", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        var query = new URLSearchParams(new FormData(form)).toString();
        fetch(url + "?" + query, { headers: { "X-Console-Fragment": "picker" }, credentials: "same-origin" })
          .then(function (response) { return response.ok ? response.text() : null; })
          .then(function (html) { if (html !== null) { replaceKeepingChecks(target, html); } });
      }, 250);
    });
  }

  // A header checkbox with data-select-all="<form id>" checks or clears
  // every row checkbox of that form in its table.
  document.addEventListener("change", function (event) {
    var all = event.target;
    var formId = all.getAttribute && all.getAttribute("data-select-all");
    if (!formId) { return; }
    var table = all.closest("table");
    table.querySelectorAll('input[type=checkbox][form="' + formId + '"]').forEach(function (box) {
      if (!box.disabled) { box.checked = all.checked; }
    });
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-live-target]").forEach(liveSearch);
    // The select-all boxes need the script: hidden until it runs.
    document.querySelectorAll("[data-select-all]").forEach(function (box) { box.hidden = false; });
  });
})();

// Usage bars: their width comes from data-percent (no inline style under the CSP).
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  document.querySelectorAll(".bar > span[data-percent]").forEach(function (bar) {
    bar.style.width = Math.max(0, Math.min(100, Number(bar.getAttribute("data-percent")) || 0)) + "%";
  });
  // A refused form is shown at the URL it was posted to; put the page's own
  // address in the history, so that a refresh reloads the page, never re-posts.
  var main = document.querySelector("main[data-canonical-url]");
  if (main && window.history && window.history.replaceState) {
    window.history.replaceState(null, "", main.getAttribute("data-canonical-url"));
  }
});
