/* servebound: sortable and filterable tables, as progressive enhancement. Without script every table
 * is complete and in its served order; with it, a click on a column heading sorts by that column
 * (numbers by value: "1,234 tok/s", "85.5 GB", "n/a" last) and a box above the table filters its rows. */
(function () {
  "use strict";
  function value(cell) {
    var text = (cell.getAttribute("data-sort") || cell.textContent || "").trim();
    var m = text.replace(/,/g, "").match(/^[$]?(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*(k|M|G|T|B|ms|s|us)?/);
    if (!m) return { n: null, t: text.toLowerCase() };
    var n = parseFloat(m[1]), unit = m[2] || "";
    n *= { k: 1e3, M: 1e6, G: 1e9, B: 1e9, T: 1e12, ms: 1e-3, us: 1e-6 }[unit] || 1;
    return { n: n, t: text.toLowerCase() };
  }
  function compare(a, b) {
    if (a.n !== null && b.n !== null) return a.n - b.n;
    if (a.n !== null) return -1;
    if (b.n !== null) return 1;
    return a.t < b.t ? -1 : a.t > b.t ? 1 : 0;
  }
  function enhance(table) {
    var body = table.tBodies[0], head = table.tHead;
    if (!body || !head || body.rows.length < 4) return;
    var rows = Array.prototype.slice.call(body.rows);
    var box = document.createElement("input");
    box.type = "search";
    box.placeholder = "Filter these " + rows.length + " rows";
    box.className = "table-filter";
    box.setAttribute("aria-label", "Filter the table");
    var holder = table.closest(".scroll") || table;
    holder.parentNode.insertBefore(box, holder);
    box.addEventListener("input", function () {
      var q = box.value.trim().toLowerCase();
      rows.forEach(function (r) { r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0; });
    });
    Array.prototype.forEach.call(head.rows[0].cells, function (th, col) {
      th.classList.add("sortable");
      th.setAttribute("tabindex", "0");
      th.setAttribute("title", "Sort by this column");
      var sort = function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        Array.prototype.forEach.call(head.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        rows.sort(function (a, b) { return dir * compare(value(a.cells[col]), value(b.cells[col])); });
        rows.forEach(function (r) { body.appendChild(r); });
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sort(); } });
    });
  }
  function init() { document.querySelectorAll("table.sortable").forEach(enhance); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
