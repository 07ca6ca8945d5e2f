// Scheduling decisions: sort the hosts table by a click on a column header,
// and filter its rows by result or by text. The page works without it.
(function () {
  "use strict";

  function cellValue(row, index, type) {
    var cell = row.cells[index];
    if (!cell) { return null; }
    var raw = cell.hasAttribute("data-sort-value") ? cell.getAttribute("data-sort-value") : cell.textContent;
    raw = raw.trim();
    if (raw === "") { return null; }
    if (type === "number") {
      var number = Number(raw);
      return isNaN(number) ? null : number;
    }
    return raw.toLowerCase();
  }

  function sortTable(table, index, type, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.filter.call(body.rows, function (row) { return !row.querySelector("td.empty"); });
    rows.forEach(function (row, position) { row.setAttribute("data-position", position); });
    rows.sort(function (a, b) {
      var x = cellValue(a, index, type), y = cellValue(b, index, type);
      if (x === null && y === null) { return a.getAttribute("data-position") - b.getAttribute("data-position"); }
      if (x === null) { return 1; }  // empty cells last, whichever the direction
      if (y === null) { return -1; }
      var order = type === "number" ? x - y : x.localeCompare(y, undefined, { numeric: true });
      if (order === 0) { return a.getAttribute("data-position") - b.getAttribute("data-position"); }
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function makeSortable(table) {
    var headers = table.querySelectorAll("thead th[data-sort]");
    headers.forEach(function (th) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort-button";
      button.title = "Sort by " + th.textContent.trim();
      while (th.firstChild) { button.appendChild(th.firstChild); }
      var arrow = document.createElement("span");
      arrow.className = "sort-arrow";
      button.appendChild(arrow);
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var descending = th.getAttribute("aria-sort") === "ascending";
        headers.forEach(function (other) {
          other.setAttribute("aria-sort", "none");
          other.querySelector(".sort-arrow").textContent = "";
        });
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        arrow.textContent = descending ? " ▼" : " ▲";
        sortTable(table, th.cellIndex, th.getAttribute("data-sort"), descending);
      });
    });
  }

  function makeFilter(bar) {
    var table = document.getElementById(bar.getAttribute("data-filter-for"));
    if (!table) { return; }
    var result = bar.querySelector("[data-filter=result]");
    var text = bar.querySelector("[data-filter=text]");
    var count = bar.querySelector("[data-filter-count]");
    function apply() {
      var wanted = result ? result.value : "";
      var needle = text ? text.value.trim().toLowerCase() : "";
      var shown = 0, total = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        if (row.querySelector("td.empty")) { return; }
        total += 1;
        var visible = (!wanted || row.getAttribute("data-result") === wanted) &&
          (!needle || row.textContent.toLowerCase().indexOf(needle) !== -1);
        row.hidden = !visible;
        if (visible) { shown += 1; }
      });
      if (count) { count.textContent = shown + " of " + total + " hosts shown"; }
    }
    bar.hidden = false;
    bar.addEventListener("input", apply);
    bar.addEventListener("change", apply);
    apply();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table[data-sortable]").forEach(makeSortable);
    document.querySelectorAll("[data-filter-for]").forEach(makeFilter);
  });
})();
