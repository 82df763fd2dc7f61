/* servebound: sortable and filterable tables, as progressive enhancement. Without script every table
 * is complete and in its served order; with it, a click on a column heading sorts by that column
 * (numbers by value: "1,234 tok/s", "85.5 GB", "n/a" last) and a box above the table filters its rows.
 * A ranking's tables (a hardware page's models, a model page's machines by class) share one filter
 * instead: verdict boxes and one search over every row, with the count of rows shown. */
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
    sortable(table, head, body, rows);
    if (table.closest("[data-filtered]")) return;  // the ranking's one filter holds its rows
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
  }
  function sortable(table, head, body, rows) {
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
        table.dispatchEvent(new CustomEvent("sorted", { bubbles: true }));
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sort(); } });
    });
  }
  // What a search matches in a row: its words and its link (the pair's ids), folded to letters and
  // digits, so "llama 70b q4" finds "Llama-3.1-70B (Q4_K_M)".
  function fold(text) { return text.toLowerCase().replace(/[^a-z0-9.]+/g, " "); }
  function rowText(r) {
    var link = r.querySelector("a[href]");
    return " " + fold(r.cells[0].textContent + " " + r.cells[1].textContent + " " + (link ? decodeURIComponent(link.getAttribute("href")) : "")) + " ";
  }
  function ranking(panel) {
    var holder = document.getElementById(panel.getAttribute("data-filter"));
    if (!holder) return;
    var rows = Array.prototype.slice.call(holder.querySelectorAll("tbody tr[data-verdict]"));
    var texts = rows.map(rowText);
    var boxes = panel.querySelectorAll("input[name=verdict]"), search = panel.querySelector(".row-search");
    var count = panel.querySelector(".row-count"), noun = panel.getAttribute("data-noun");
    // A long ranking lists its first ``data-cap`` matching rows (in the table's order) until asked for
    // the rest, so the page stays short; the search and the boxes always look at every row.
    var cap = Number(panel.getAttribute("data-cap")) || Infinity, all = false;
    var more = document.createElement("button");
    more.type = "button";
    more.className = "show-all";
    more.addEventListener("click", function () { all = true; apply(); });
    holder.appendChild(more);
    var n = function (x) { return x.toLocaleString("en-US"); };
    function apply() {
      var wanted = {}, words = fold(search.value).split(" ").filter(Boolean), matching = 0;
      Array.prototype.forEach.call(boxes, function (b) { wanted[b.value] = b.checked; });
      var order = Array.prototype.slice.call(holder.querySelectorAll("tbody tr[data-verdict]"));
      order.forEach(function (r) {
        var text = texts[rows.indexOf(r)];
        var keep = wanted[r.getAttribute("data-verdict")] && words.every(function (w) { return text.indexOf(w) >= 0; });
        if (keep) matching++;
        r.hidden = !keep || (!all && matching > cap);
      });
      holder.querySelectorAll(".rank-group").forEach(function (g) {
        g.hidden = !g.querySelector("tbody tr[data-verdict]:not([hidden])");
      });
      // a note under a table stays while a row in view points to it
      var cited = {};
      holder.querySelectorAll("tbody tr[data-verdict]:not([hidden]) sup a").forEach(function (a) { cited[a.getAttribute("href").slice(1)] = true; });
      holder.querySelectorAll("ol.why-notes").forEach(function (ol) {
        var any = false;
        Array.prototype.forEach.call(ol.children, function (li) { li.hidden = !cited[li.id]; any = any || !li.hidden; });
        ol.hidden = !any;
      });
      var listed = all ? matching : Math.min(matching, cap);
      count.textContent = n(matching) + " of " + n(rows.length) + " " + noun + " match" + (listed < matching ? " (the first " + n(listed) + " listed)" : "");
      more.hidden = listed >= matching;
      more.textContent = "List all " + n(matching) + " " + noun;
    }
    Array.prototype.forEach.call(boxes, function (b) { b.addEventListener("change", apply); });
    search.addEventListener("input", apply);
    holder.addEventListener("sorted", apply);
    panel.hidden = false;
    apply();
  }
  function init() {
    document.querySelectorAll("table.sortable").forEach(enhance);
    document.querySelectorAll(".row-filter[data-filter]").forEach(ranking);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
