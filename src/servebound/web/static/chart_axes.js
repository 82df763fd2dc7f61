/* A chart's axes and labels in the browser: pure functions, no DOM.
 *
 * Ports of servebound.web.figures.axes (nice_step, ticks) and of figures' chart frame (_mark_label_x,
 * legend_entries). derivation.js's live figures and site.js's charts both draw with these, so their ticks,
 * mark labels and legends fall where the server's do. A page loads it before the scripts that draw; Node
 * loads it with require() (under derivation.js in tests/web/run_derivation.js).
 */
(function (root) {
  "use strict";

  /* servebound.web.figures.axes.nice_step and ticks */
  function niceStep(span) {
    var raw = span / 7, mag = Math.pow(10.0, Math.floor(Math.log10(raw))), ms = [1.0, 2.0, 5.0, 10.0];
    for (var i = 0; i < ms.length; i++) if (raw <= ms[i] * mag) return ms[i] * mag;
    return 10 * mag;
  }
  function ticks(lo, hi, log) {
    var out = [];
    if (log) {
      var first = Math.floor(Math.log10(lo)), last = Math.ceil(Math.log10(hi));
      var stride = Math.max(1, Math.ceil((last - first) / 8));
      if (last - first > 3) {
        for (var e = first; e <= last; e += stride) { var t = Math.pow(10.0, e); if (lo <= t && t <= hi * 1.0001) out.push(t); }
        return out;
      }
      for (var d = first; d <= last; d++) [1.0, 2.0, 5.0].forEach(function (m) { var v = m * Math.pow(10.0, d); if (lo <= v && v <= hi * 1.0001) out.push(v); });
      if (out.length >= 3) return out;
      out = [];
    }
    var step = hi > lo ? niceStep(hi - lo) : 1.0, start = Math.ceil(lo / step) * step;
    var n = Math.trunc((hi - start) / step + 1e-9) + 1;
    for (var i = 0; i < n; i++) out.push(start + i * step);
    return out;
  }

  /* servebound.web.figures.charts' chart frame, _mark_label_x and legend_entries: a mark's label beside its
   * line, the legend's entries in rows below the plot (both scripts' charts place them as the server) */
  var CHART_W = 640, LEGEND_X = 8, CHAR_PX = 12;
  function markLabelX(x, label) {
    var w = CHAR_PX * label.length;
    if (x + 4 + w <= CHART_W - 4) return [x + 4, "start"];
    if (x - 4 - w >= 4) return [x - 4, "end"];
    return [Math.max(4, CHART_W - 4 - w), "start"];
  }
  function legendEntries(chart, yMarks) {
    var items = chart.series.map(function (s) { return [s.name, "series " + s.css]; })
      .concat(yMarks.map(function (m) { return [m.label, "mark " + m.css]; }));
    var out = [], lx = LEGEND_X, row = 0;
    items.forEach(function (it) {
      var span = 24 + CHAR_PX * it[0].length;
      if (lx > LEGEND_X && lx + span > CHART_W - LEGEND_X) { lx = LEGEND_X; row += 1; }
      out.push([it[0], it[1], lx, row]);
      lx += span + 18;
    });
    return out;
  }

  var api = { niceStep: niceStep, ticks: ticks, markLabelX: markLabelX, legendEntries: legendEntries, CHAR_PX: CHAR_PX };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.servebound_chart_axes = api;
})(typeof self !== "undefined" ? self : this);
