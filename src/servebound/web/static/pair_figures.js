/* The pair page's figures, drawn in the browser: the decode curves, the prefill rooflines, the context
 * sweep and the memory bar, redrawn for the form's workload, and every chart's hover readout.
 *
 * A chart is drawn into its SVG in figures.render_chart's layout (with chart_axes.js's ticks, mark labels
 * and legend); the numbers come from calc.js. site.js, loaded after this file, draws the figures of its
 * workload (servebound_pair_figures.forPage(page).drawFigures) and hooks the readout on the server's
 * charts (attachHover).
 */
(function () {
  "use strict";

  var calc = window.servebound_calc, axes = window.servebound_chart_axes;
  var MAX_BATCH = calc.MAX_BATCH;

  // ---------------------------------------------------------------- charts (the server's layout)
  /* the axis labels' and the readout's short numbers: 1.5k, 20M, 0.25 */
  function shortNumber(v) {
    var a = Math.abs(v), units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) if (a >= units[i][0]) return +(v / units[i][0]).toPrecision(6) + units[i][1];
    return a >= 1 || a === 0 ? String(+v.toPrecision(6)) : String(+v.toPrecision(3));
  }

  // figures.render_chart's layout: the x marks' labels in rows above the plot, the legend under it.
  var W = 640, LEFT = 70, RIGHT = 20, PLOT_H = 236, MARK_TOP = 8, MARK_ROW = 24, LEGEND_ROW = 24, CHAR_PX = axes.CHAR_PX;
  var SVGNS = "http://www.w3.org/2000/svg";

  var niceStep = axes.niceStep, ticks = axes.ticks, markLabelX = axes.markLabelX, legendEntries = axes.legendEntries;
  function scale(lo, hi, log, a, b) {
    if (log) { lo = Math.max(lo, 1e-12); if (hi <= lo) hi = lo * 10; } else if (hi <= lo) hi = lo + 1;
    var f = function (v) {
      var t = log ? (Math.log10(Math.max(v, 1e-300)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : (v - lo) / (hi - lo);
      return a + t * (b - a);
    };
    f.lo = lo; f.hi = hi;
    return f;
  }
  function el(name, attrs, text) {
    var e = document.createElementNS(SVGNS, name);
    for (var k in attrs) if (attrs.hasOwnProperty(k)) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* chart = {id, xLog, yLog, series: [{name, css, unit, x:[], y:[]}], xMarks: [{value,label,css}], yMarks, shadeFrom} */
  function drawChart(svg, chart) {
    var title = svg.querySelector("title");
    var titleText = title ? title.textContent : "";
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.appendChild(el("title", { id: chart.id + "-t" }, titleText));
    var xs = [], ys = [];
    chart.series.forEach(function (s) {
      s.x.forEach(function (x, i) { var y = s.y[i]; if (isFinite(y) && (y > 0 || !chart.yLog)) { xs.push(x); ys.push(y); } });
    });
    (chart.yMarks || []).forEach(function (m) { if (m.value > 0) ys.push(m.value); });
    var xlo = Math.min.apply(null, xs), xhi = Math.max.apply(null, xs), ylo, yhi;
    if (chart.yLog) { ylo = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, ys)))); yhi = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, ys)))); }
    else { ylo = 0; yhi = ys.length ? Math.max.apply(null, ys) * 1.08 : 1; var st = niceStep(yhi); yhi = Math.ceil(yhi / st) * st; }
    var sx = scale(xlo, xhi, chart.xLog, LEFT, W - RIGHT);
    var xMarks = (chart.xMarks || []).filter(function (m) { return m.value >= sx.lo && m.value <= sx.hi; });
    var top = MARK_TOP + MARK_ROW * (1 + xMarks.length) + 6, bottom = top + PLOT_H;
    var sy = scale(ylo, yhi, chart.yLog, bottom, top);
    var yMarks = (chart.yMarks || []).filter(function (m) { return m.value >= sy.lo && m.value <= sy.hi; });
    var legend = legendEntries(chart, yMarks), legendTop = bottom + 72;
    var readoutY = legendTop + LEGEND_ROW * (legend.length ? legend[legend.length - 1][3] + 1 : 0);
    svg.setAttribute("viewBox", "0 0 " + W + " " + (readoutY + 10));
    svg.appendChild(el("rect", { "class": "plot", x: LEFT, y: top, width: W - RIGHT - LEFT, height: PLOT_H }));
    if (chart.shadeFrom !== null && chart.shadeFrom !== undefined && chart.shadeFrom < sx.hi) {
      var x0 = sx(Math.max(chart.shadeFrom, sx.lo));
      svg.appendChild(el("rect", { "class": "nofit", x: x0, y: top, width: W - RIGHT - x0, height: PLOT_H }));
    }
    ticks(sx.lo, sx.hi, chart.xLog).forEach(function (t) {
      svg.appendChild(el("line", { "class": "grid", x1: sx(t), x2: sx(t), y1: top, y2: bottom }));
      svg.appendChild(el("text", { "class": "tick", x: sx(t), y: bottom + 20, "text-anchor": "middle" }, shortNumber(t)));
    });
    ticks(sy.lo, sy.hi, chart.yLog).forEach(function (t) {
      svg.appendChild(el("line", { "class": "grid", x1: LEFT, x2: W - RIGHT, y1: sy(t), y2: sy(t) }));
      svg.appendChild(el("text", { "class": "tick", x: LEFT - 6, y: sy(t) + 4, "text-anchor": "end" }, shortNumber(t)));
    });
    svg.appendChild(el("line", { "class": "axis", x1: LEFT, x2: W - RIGHT, y1: bottom, y2: bottom }));
    svg.appendChild(el("line", { "class": "axis", x1: LEFT, x2: LEFT, y1: top, y2: bottom }));
    svg.appendChild(el("text", { "class": "label", x: (LEFT + W - RIGHT) / 2, y: bottom + 46, "text-anchor": "middle" }, chart.xLabel));
    svg.appendChild(el("text", { "class": "label", x: 4, y: MARK_TOP + MARK_ROW - 6 }, chart.yLabel));
    yMarks.forEach(function (m) {
      var g = el("g", { "class": "mark " + m.css });
      g.appendChild(el("line", { x1: LEFT, x2: W - RIGHT, y1: sy(m.value), y2: sy(m.value) }));
      g.appendChild(el("title", {}, m.label));
      svg.appendChild(g);
    });
    xMarks.forEach(function (m, i) {
      var x = sx(m.value), at = markLabelX(x, m.label);
      var g = el("g", { "class": "mark " + m.css });
      g.appendChild(el("line", { x1: x, x2: x, y1: top, y2: bottom }));
      g.appendChild(el("text", { x: at[0], y: MARK_TOP + MARK_ROW * (i + 2) - 6, "text-anchor": at[1] }, m.label));
      svg.appendChild(g);
    });
    chart.series.forEach(function (s) {
      var pts = [];
      s.x.forEach(function (x, i) { var y = s.y[i]; if (isFinite(y) && (y > 0 || !chart.yLog)) pts.push(sx(x).toFixed(1) + "," + sy(y).toFixed(1)); });
      svg.appendChild(el("polyline", { "class": "series " + s.css, points: pts.join(" ") }));
    });
    legend.forEach(function (it) {
      var y = legendTop + LEGEND_ROW * it[3];
      var g = el("g", { "class": "legend" });
      g.appendChild(el("line", { "class": it[1], x1: it[2], x2: it[2] + 20, y1: y - 5, y2: y - 5 }));
      g.appendChild(el("text", { x: it[2] + 24, y: y }, it[0]));
      svg.appendChild(g);
    });
    svg.appendChild(el("text", { "class": "readout", x: W - RIGHT, y: readoutY, "text-anchor": "end" }));
    svg.appendChild(el("desc", { "class": "series-data" }, JSON.stringify(chart.series)));
    svg.setAttribute("data-x0", sx.lo); svg.setAttribute("data-x1", sx.hi);
    svg.setAttribute("data-xlog", chart.xLog ? "1" : "0");
    attachHover(svg);
  }

  // ---------------------------------------------------------------- hover readout
  function attachHover(svg) {
    if (svg.dataset.hover) return;
    svg.dataset.hover = "1";
    svg.addEventListener("mousemove", function (ev) {
      var desc = svg.querySelector("desc.series-data"), out = svg.querySelector("text.readout");
      if (!desc || !out) return;
      var series = JSON.parse(desc.textContent);
      var box = svg.getBoundingClientRect();
      var px = (ev.clientX - box.left) * W / box.width;
      var lo = +svg.getAttribute("data-x0"), hi = +svg.getAttribute("data-x1"), log = svg.getAttribute("data-xlog") === "1";
      var t = (px - LEFT) / (W - RIGHT - LEFT);
      if (t < 0 || t > 1) { out.textContent = ""; return; }
      var x = log ? Math.pow(10, Math.log10(lo) + t * (Math.log10(hi) - Math.log10(lo))) : lo + t * (hi - lo);
      var parts = series.map(function (s) {
        var best = 0;
        for (var i = 1; i < s.x.length; i++) if (Math.abs(s.x[i] - x) < Math.abs(s.x[best] - x)) best = i;
        return s.name + " " + shortNumber(s.y[best]) + " " + (s.unit || "") + " at " + shortNumber(s.x[best]);
      });
      out.textContent = parts.join(" · ");
    });
    svg.addEventListener("mouseleave", function () { var o = svg.querySelector("text.readout"); if (o) o.textContent = ""; });
  }

  // ---------------------------------------------------------------- the page's figures
  /* The figures of the page's workload: page = {workloadOf, FMT, grouped}, site.js's query to calc.js's
   * workload and its number formats (the labels say what its numbers say). */
  function pageFigures(page) {
    var workloadOf = page.workloadOf, FMT = page.FMT, grouped = page.grouped;

    function rates(hw, p) {
      return calc.rates(hw, p);
    }

    function prefillAt(hw, m, L, traffic, r) {
      var w = { overhead_bytes: 0, alloc_context: L, expert_traffic: traffic };
      return calc.prefillCurve(hw, m, w, [L], 1)[0];
    }

    function decodeCurve(hw, m, q, batches) {
      return calc.decodeCurve(hw, m, workloadOf(q), batches);
    }

    function logSpaced(top, n) {
      var out = {}, res = [];
      for (var i = 0; i < n; i++) out[Math.round(Math.pow(10, Math.log10(top) * i / (n - 1)))] = true;
      for (var k in out) if (out.hasOwnProperty(k)) res.push(+k);
      return res.sort(function (a, b) { return a - b; });
    }

    function drawFigures(data, q, d, p) {
      var hw = data.hardware, m = data.model;
      var known = [d.batch_mem, d.batch_star, d.forced ? d.forced.batch : null].filter(function (v) { return v; });
      var top = Math.min(Math.floor(Math.max.apply(null, [8].concat(known)) * 1.5) + 1, MAX_BATCH);
      var batches = logSpaced(top, 90);
      known.forEach(function (v) { if (v <= top && batches.indexOf(v) < 0) batches.push(v); });
      batches.sort(function (a, b) { return a - b; });
      var pts = decodeCurve(hw, m, q, batches);
      var marks = [];
      if (d.batch_mem) marks.push({ value: d.batch_mem, label: "b_mem = " + FMT.int(d.batch_mem), css: "bmem" });
      if (d.batch_star) marks.push({ value: d.batch_star, label: "b* = " + FMT.int(d.batch_star), css: "bstar" });
      if (d.forced) marks.push({ value: d.forced.batch, label: "batch " + FMT.int(d.forced.batch), css: "forced" });
      var xLog = batches[batches.length - 1] / batches[0] >= 50;
      var shade = d.batch_mem !== null ? d.batch_mem : 1;
      var agg = pts.map(function (r) { return r[0]; }), per = pts.map(function (r) { return r[1]; });
      var svgA = document.getElementById("fig-aggregate"), svgP = document.getElementById("fig-per-session");
      if (svgA) drawChart(svgA, { id: "fig-aggregate", xLog: xLog, yLog: false, xLabel: "batch b (concurrent sessions)", yLabel: "aggregate tok/s",
        series: [{ name: "aggregate T(b)", css: "agg", unit: "tok/s", x: batches, y: agg }], xMarks: marks, shadeFrom: shade });
      var perMax = Math.max.apply(null, per), perMin = Math.min.apply(null, per);
      if (svgP) drawChart(svgP, { id: "fig-per-session", xLog: xLog, yLog: perMax / Math.max(perMin, 1e-300) > 100,
        xLabel: "batch b (concurrent sessions)", yLabel: "tok/s per session",
        series: [{ name: "per session r(b)", css: "per", unit: "tok/s", x: batches, y: per }], xMarks: marks,
        yMarks: q.floor > 0 ? [{ value: q.floor, label: "floor r* = " + q.floor, css: "floor" }] : [], shadeFrom: shade });
      var svgR = document.getElementById("fig-prefill-rate"), svgT = document.getElementById("fig-prefill-time");
      if (p && m.prefill && (svgR || svgT)) {
        var maxL = p.range ? p.range.max_prompt_tokens : q.alloc_context;
        var lengths = logSpaced(Math.max(maxL, q.prompt, 2), 90);
        var r = rates(hw, m.prefill);
        var rows = lengths.map(function (L) { return prefillAt(hw, m, L, q.expert_traffic, r); });
        var pm = [];
        if (p.crossover_with_attention_tokens) pm.push({ value: p.crossover_with_attention_tokens, label: "crossover S* = " + FMT.int0(p.crossover_with_attention_tokens) + " (attention included)", css: "cross" });
        pm.push({ value: q.prompt, label: "prompt " + FMT.int(q.prompt), css: "forced" });
        var series = [
          { name: "prefill ceiling", css: "agg", unit: "tok/s", x: lengths, y: rows.map(function (o) { return o.tok_s; }) },
          { name: "memory roofline", css: "mem", unit: "tok/s", x: lengths, y: rows.map(function (o) { return o.memory_tok_s; }) }
        ];
        if (rows[0].compute_tok_s !== null) series.push({ name: "compute roofline", css: "cmp", unit: "tok/s", x: lengths, y: rows.map(function (o) { return o.compute_tok_s; }) });
        if (svgR) drawChart(svgR, { id: "fig-prefill-rate", xLog: true, yLog: true, xLabel: "prompt length L (tokens)", yLabel: "prefill tok/s", series: series, xMarks: pm });
        if (svgT) drawChart(svgT, { id: "fig-prefill-time", xLog: true, yLog: true, xLabel: "prompt length L (tokens)", yLabel: "seconds",
          series: [{ name: "t_pf,min", css: "per", unit: "s", x: lengths, y: rows.map(function (o) { return o.time_s; }) }], xMarks: pm });
      }
      drawContext(data, q);
      drawMemory(data, q, d);
    }

    function drawContext(data, q) {
      var svg = document.getElementById("fig-context");
      if (!svg) return;
      var hw = data.hardware, m = data.model, w = workloadOf(q);
      var rng = calc.contextRange(hw, m, w);
      if (rng.max_read_context_tokens === null || rng.max_read_context_tokens < 2) return;
      var contexts = logSpaced(rng.max_read_context_tokens, 90).filter(function (L) { return L >= 1; });
      var rows = calc.contextCurve(hw, m, w, contexts);
      var series = [{ name: "one session", css: "per", unit: "tok/s", x: contexts, y: rows.map(function (r) { return r.single_session_tok_s; }) }];
      var agg = rows.map(function (r) { return r.aggregate_tok_s === null ? NaN : r.aggregate_tok_s; });
      if (agg.some(function (v) { return isFinite(v); })) series.push({ name: "aggregate at b*", css: "agg", unit: "tok/s", x: contexts, y: agg });
      var marks = [{ value: q.read_context, label: "L_read " + FMT.int(q.read_context), css: "forced" }];
      var edge = rng.floor_read_context_tokens;
      if (edge !== null && edge < rng.max_read_context_tokens) marks.push({ value: Math.max(edge, 1), label: "floor holds up to " + FMT.int(edge), css: "floor" });
      drawChart(svg, { id: "fig-context", xLog: true, yLog: true, xLabel: "read context L_read (tokens)", yLabel: "tok/s", series: series, xMarks: marks });
    }

    function drawMemory(data, q, d) {
      var svg = document.getElementById("fig-memory");
      if (!svg) return;
      var sessions = d.forced ? d.forced.batch : (d.batch_star || d.batch_mem || 0);
      var C = data.hardware.memory_bytes;
      var parts = [["weights (resident)", d.resident_bytes, "w"], ["runtime overhead", q.overhead_gb * 1e9, "o"],
                   ["KV cache, " + FMT.int(sessions) + (sessions === 1 ? " session" : " sessions"), sessions * d.kv_alloc_bytes, "kv"]];
      var used = parts.reduce(function (a, p) { return a + p[1]; }, 0);
      parts.push(["free", Math.max(0, C - used), "free"]);
      var total = Math.max(C, used + parts[3][1]);
      var title = svg.querySelector("title"), titleText = title ? title.textContent : "";
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      svg.appendChild(el("title", { id: "fig-memory-t" }, titleText));
      var x = 4, usable = 632;
      parts.forEach(function (p) {
        var w = total > 0 ? usable * p[1] / total : 0;
        if (w <= 0) return;
        var r = el("rect", { "class": "seg " + p[2], x: x.toFixed(1), y: 8, width: w.toFixed(1), height: 30 });
        r.appendChild(el("title", {}, p[0] + ": " + FMT.gb(p[1])));
        svg.appendChild(r);
        x += w;
      });
      var capX = 4 + usable * C / total;
      svg.appendChild(el("line", { "class": "cap", x1: capX, x2: capX, y1: 2, y2: 44 }));
      var lx = 4, ly = 56;
      parts.forEach(function (p) {
        var label = p[0] + " " + grouped(p[1] / 1e9, 1) + " GB", span = 14 + CHAR_PX * label.length;
        if (lx > 4 && lx + span > 636) { lx = 4; ly += LEGEND_ROW; }  // wrap: every entry stays inside the frame
        var g = el("g", { "class": "legend" });
        g.appendChild(el("rect", { "class": "seg " + p[2], x: lx, y: ly, width: 10, height: 10 }));
        g.appendChild(el("text", { x: lx + 14, y: ly + 10 }, label));
        svg.appendChild(g);
        lx += span + 12;
      });
      svg.setAttribute("viewBox", "0 0 640 " + (ly + 24));
    }

    return { drawFigures: drawFigures };
  }

  window.servebound_pair_figures = { forPage: pageFigures, attachHover: attachHover };
})();
