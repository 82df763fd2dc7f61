/* The server's chart markup in the browser: Python's number formats and figures.render_chart.
 *
 * derivation.js redraws the derivation's figures as the same SVG markup the server writes for the same
 * parameters (tests/web/test_browser.py compares the two element by element): the numbers in that markup
 * are formatted as Python formats them (f"{v:.1f}", f"{v:g}", repr), and a chart is laid out as
 * render_chart lays it out, with chart_axes.js's ticks, mark labels and legend. Pure functions, no DOM.
 * On a page it loads after chart_axes.js and before derivation.js; Node loads it with require().
 */
(function (root) {
  "use strict";

  var axes = root.servebound_chart_axes || (typeof require === "function" ? require("./chart_axes.js") : null);

  // ---------------------------------------------------------------- Python's number formats
  /* f"{v:.{d}f}": correctly rounded, exact ties to even (toFixed rounds exact ties up) */
  function fixed(v, d) {
    if (!isFinite(v)) return v > 0 ? "inf" : v < 0 ? "-inf" : "nan";
    var a = Math.abs(v), s = a.toFixed(d);
    var exact = a.toFixed(100).replace(/0+$/, "");
    var dot = exact.indexOf(".");
    if (dot >= 0 && exact.length - dot - 1 === d + 1 && exact.charAt(exact.length - 1) === "5") {
      var down = exact.slice(0, exact.length - 1);
      if (d === 0) down = down.slice(0, -1);
      if (+down.charAt(down.length - 1) % 2 === 0) s = down;
    }
    return (v < 0 || Object.is(v, -0) ? "-" : "") + s;
  }
  function group(s) {
    var neg = s.charAt(0) === "-", body = neg ? s.slice(1) : s, dot = body.indexOf(".");
    var whole = dot < 0 ? body : body.slice(0, dot), frac = dot < 0 ? "" : body.slice(dot);
    return (neg ? "-" : "") + whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + frac;
  }
  function num(v) { return group(fixed(v, 0)); }            // f"{v:,.0f}"
  function int(v) { return group(String(v)); }             // f"{n:,}" for an int
  function expPart(e) { return "e" + (e < 0 ? "-" : "+") + (Math.abs(e) < 10 ? "0" : "") + Math.abs(e); }
  /* f"{v:.{p}g}" (p = 6 for ":g") */
  function fmtG(v, p) {
    p = p || 6;
    if (v === 0) return Object.is(v, -0) ? "-0" : "0";
    if (!isFinite(v)) return v > 0 ? "inf" : v < 0 ? "-inf" : "nan";
    var parts = v.toExponential(p - 1).split("e"), e = +parts[1];
    if (e >= -4 && e < p) {
      var s = fixed(v, p - 1 - e);
      return s.indexOf(".") >= 0 ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
    }
    var m = parts[0].indexOf(".") >= 0 ? parts[0].replace(/0+$/, "").replace(/\.$/, "") : parts[0];
    return m + expPart(e);
  }
  /* repr(float) / str(float): json.dumps' numbers and a float in an f-string */
  function pyRepr(v) {
    if (Number.isInteger(v) && Math.abs(v) < 1e16) return String(v) + ".0";
    var a = Math.abs(v);
    if (a >= 1e16 || (a < 1e-4 && a > 0)) {
      var parts = v.toExponential().split("e");
      return parts[0] + expPart(+parts[1]);
    }
    return String(v);
  }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&#34;").replace(/'/g, "&#39;");
  }

  // ---------------------------------------------------------------- figures.render_chart
  var W = 640, LEFT = 70, RIGHT = 20, PLOT_H = 236, MARK_TOP = 8, MARK_ROW = 24, LEGEND_ROW = 24;

  var niceStep = axes.niceStep, ticks = axes.ticks, markLabelX = axes.markLabelX, legendEntries = axes.legendEntries;
  function shortNumber(v) {
    var a = Math.abs(v), units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) if (a >= units[i][0]) return fmtG(v / units[i][0]) + units[i][1];
    return a >= 1 || a === 0 ? fmtG(v) : fmtG(v, 3);
  }
  function Scale(lo, hi, log, a, b) {
    if (log) { lo = Math.max(lo, 1e-12); hi = hi <= lo ? Math.max(hi, lo * 10) : hi; }
    else if (hi <= lo) hi = lo + 1.0;
    var f = function (v) {
      var t = log ? (Math.log10(Math.max(v, 1e-300)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : (v - lo) / (hi - lo);
      return a + t * (b - a);
    };
    f.lo = lo; f.hi = hi;
    return f;
  }
  function value(v, unit) {
    var text = Math.abs(v) >= 100 ? num(v) : group(fmtG(v, 3));
    return (text + " " + unit).trim();
  }
  function jsonSeries(data) {
    var list = function (xs) { return "[" + xs.map(pyRepr).join(", ") + "]"; };
    var s = "[" + data.map(function (d) {
      return "{" + ["\"name\": " + JSON.stringify(d.name), "\"css\": " + JSON.stringify(d.css),
        "\"unit\": " + JSON.stringify(d.unit), "\"x\": " + list(d.x), "\"y\": " + list(d.y)].join(", ") + "}";
    }).join(", ") + "]";
    return s.replace(/</g, "\\u003c").replace(/&/g, "\\u0026");
  }
  function keep(y, chart) { return isFinite(y) && (y > 0 || !chart.yLog); }

  /* chart: {id, title, xLabel, yLabel, series: [{name, x, y, css, unit}], xLog, yLog, xMarks, yMarks,
   * shadeFromX, xUnit} */
  function renderChart(chart) {
    var xsAll = [], ys = [];
    chart.series.forEach(function (s) {
      s.x.forEach(function (x) { xsAll.push(x); });
      s.y.forEach(function (y) { if (keep(y, chart)) ys.push(y); });
    });
    var xLo = Math.min.apply(null, xsAll), xHi = Math.max.apply(null, xsAll);
    (chart.yMarks || []).forEach(function (m) { if (m.value > 0) ys.push(m.value); });
    var yLo, yHi;
    if (chart.yLog && !ys.length) { yLo = 1.0; yHi = 10.0; }
    else if (chart.yLog) {
      yLo = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, ys))));
      yHi = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, ys))));
    } else {
      yLo = 0.0; yHi = ys.length ? Math.max.apply(null, ys) * 1.08 : 1.0;
      var st = niceStep(yHi); yHi = Math.ceil(yHi / st) * st;
    }
    var sx = Scale(xLo, xHi, chart.xLog, LEFT, W - RIGHT);
    var xMarks = (chart.xMarks || []).filter(function (m) { return sx.lo <= m.value && m.value <= sx.hi; });
    var top = MARK_TOP + MARK_ROW * (1 + xMarks.length) + 6, bottom = top + PLOT_H;
    var sy = Scale(yLo, yHi, chart.yLog, bottom, top);
    var yMarks = (chart.yMarks || []).filter(function (m) { return sy.lo <= m.value && m.value <= sy.hi; });
    var legend = legendEntries(chart, yMarks), legendTop = bottom + 72;
    var readoutY = legendTop + LEGEND_ROW * (legend.length ? legend[legend.length - 1][3] + 1 : 0);
    var id = esc(chart.id), out = [
      '<svg class="chart" id="' + id + '" viewBox="0 0 ' + W + " " + (readoutY + 10) + '" role="img" aria-labelledby="' + id + '-t" ' +
      'data-xlog="' + (chart.xLog ? 1 : 0) + '" data-ylog="' + (chart.yLog ? 1 : 0) + '" data-x0="' + fmtG(sx.lo) +
      '" data-x1="' + fmtG(sx.hi) + '" data-y0="' + fmtG(sy.lo) + '" data-y1="' + fmtG(sy.hi) + '">',
      '<title id="' + id + '-t">' + esc(chart.title) + "</title>",
      '<rect class="plot" x="' + LEFT + '" y="' + top + '" width="' + (W - RIGHT - LEFT) + '" height="' + PLOT_H + '"/>'
    ];
    if (chart.shadeFromX !== null && chart.shadeFromX !== undefined && chart.shadeFromX < sx.hi) {
      var x0 = sx(Math.max(chart.shadeFromX, sx.lo));
      out.push('<rect class="nofit" x="' + fixed(x0, 1) + '" y="' + top + '" width="' + fixed(W - RIGHT - x0, 1) +
        '" height="' + PLOT_H + '"><title>batches beyond b_mem do not fit in memory</title></rect>');
    }
    ticks(sx.lo, sx.hi, chart.xLog).forEach(function (t) {
      var x = fixed(sx(t), 1);
      out.push('<line class="grid" x1="' + x + '" x2="' + x + '" y1="' + top + '" y2="' + bottom + '"/>');
      out.push('<text class="tick" x="' + x + '" y="' + (bottom + 20) + '" text-anchor="middle">' + esc(shortNumber(t)) + "</text>");
    });
    ticks(sy.lo, sy.hi, chart.yLog).forEach(function (t) {
      var y = sy(t);
      out.push('<line class="grid" x1="' + LEFT + '" x2="' + (W - RIGHT) + '" y1="' + fixed(y, 1) + '" y2="' + fixed(y, 1) + '"/>');
      out.push('<text class="tick" x="' + (LEFT - 6) + '" y="' + fixed(y + 4, 1) + '" text-anchor="end">' + esc(shortNumber(t)) + "</text>");
    });
    out.push('<line class="axis" x1="' + LEFT + '" x2="' + (W - RIGHT) + '" y1="' + bottom + '" y2="' + bottom + '"/>' +
      '<line class="axis" x1="' + LEFT + '" x2="' + LEFT + '" y1="' + top + '" y2="' + bottom + '"/>' +
      '<text class="label" x="' + pyRepr((LEFT + W - RIGHT) / 2) + '" y="' + (bottom + 46) + '" text-anchor="middle">' + esc(chart.xLabel) + "</text>" +
      '<text class="label" x="4" y="' + (MARK_TOP + MARK_ROW - 6) + '">' + esc(chart.yLabel) + "</text>");
    yMarks.forEach(function (m) {
      var y = sy(m.value);
      out.push('<g class="mark ' + esc(m.css) + '"><line x1="' + LEFT + '" x2="' + (W - RIGHT) + '" y1="' + fixed(y, 1) + '" y2="' +
        fixed(y, 1) + '"/><title>' + esc(m.label) + "</title></g>");
    });
    xMarks.forEach(function (m, i) {
      var x = sx(m.value), at = markLabelX(x, m.label);
      out.push('<g class="mark ' + esc(m.css) + '"><line x1="' + fixed(x, 1) + '" x2="' + fixed(x, 1) + '" y1="' + top + '" y2="' +
        bottom + '"/><text x="' + fixed(at[0], 1) + '" y="' + (MARK_TOP + MARK_ROW * (i + 2) - 6) + '" text-anchor="' + at[1] + '">' +
        esc(m.label) + "</text></g>");
    });
    var data = [];
    chart.series.forEach(function (s) {
      var px = [], py = [], path = [];
      s.x.forEach(function (x, i) {
        var y = s.y[i];
        if (!keep(y, chart)) return;
        px.push(x); py.push(y); path.push(fixed(sx(x), 1) + "," + fixed(sy(y), 1));
      });
      out.push('<polyline class="series ' + esc(s.css) + '" points="' + path.join(" ") + '"><title>' + esc(s.name) + "</title></polyline>");
      data.push({ name: s.name, css: s.css, unit: s.unit, x: px, y: py });
    });
    chart.series.forEach(function (s) {
      var stride = Math.max(1, Math.floor(s.x.length / 24));
      for (var i = 0; i < s.x.length; i += stride) {
        var x = s.x[i], y = s.y[i];
        if (!isFinite(y) || (chart.yLog && y <= 0)) continue;
        out.push('<circle class="dot ' + esc(s.css) + '" cx="' + fixed(sx(x), 1) + '" cy="' + fixed(sy(y), 1) + '" r="3"><title>' +
          esc(s.name + ": " + value(y, s.unit) + " at " + value(x, chart.xUnit || "")) + "</title></circle>");
      }
    });
    legend.forEach(function (it) {
      var y = legendTop + LEGEND_ROW * it[3];
      out.push('<g class="legend"><line class="' + esc(it[1]) + '" x1="' + fixed(it[2], 1) + '" x2="' + fixed(it[2] + 20, 1) + '" y1="' +
        fixed(y - 5, 1) + '" y2="' + fixed(y - 5, 1) + '"/><text x="' + fixed(it[2] + 24, 1) + '" y="' + fixed(y, 1) + '">' + esc(it[0]) + "</text></g>");
    });
    out.push('<text class="readout" x="' + (W - RIGHT) + '" y="' + readoutY + '" text-anchor="end"></text>');
    out.push('<desc class="series-data">' + esc(jsonSeries(data)) + "</desc>");
    out.push("</svg>");
    return out.join("");
  }

  var api = { fixed: fixed, group: group, num: num, int: int, fmtG: fmtG, pyRepr: pyRepr, esc: esc,
              renderChart: renderChart };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.servebound_chart_markup = api;
})(typeof self !== "undefined" ? self : this);
