/* servebound's pair-page calculator: sliders, hover readouts, and figures redrawn in the browser.
 *
 * Served site (body data-mode="server"): the numbers come from the JSON API (/api/decode, /api/prefill).
 * Static copy (data-mode="static"): the numbers come from calc.js, the one port of the core's formulas
 * (checked against the core's conformance vectors under Node). Figures are drawn from it in both modes.
 * tests/web/test_browser.py checks that the page's numbers equal the API's. A served page computed for
 * its workload folds its charts and cost section; opening one fetches its fragment (wireFolds below).
 * No external asset, no framework: this file is the whole script.
 */
(function () {
  "use strict";

  // ---------------------------------------------------------------- the math: calc.js, the one port
  // calc.js (loaded before this file) holds every formula; tests/web/test_conformance.py checks it
  // against the Python core's conformance vectors under Node. Here only the page's query becomes its input.
  var calc = window.servebound_calc;
  var MAX_BATCH = calc.MAX_BATCH;

  function workloadOf(q) {
    var spec = null;
    if (q.draftModel && q.draft_tokens) {
      var g = q.draft_tokens, rho = q.tokens_per_step;
      if (rho === null && q.acceptance !== null) rho = q.acceptance >= 1 ? g + 1 : (1 - Math.pow(q.acceptance, g + 1)) / (1 - q.acceptance);
      if (rho !== null) spec = { draft: q.draftModel, draft_tokens: g, tokens_per_step: rho };
    }
    var engine = q.engine && ENGINES[q.engine];
    return { overhead_bytes: q.overhead_gb * 1e9, alloc_context: q.alloc_context, read_context: q.read_context,
             floor: q.floor, batch: q.batch, expert_traffic: q.expert_traffic, memory_only: q.memory_only, speculation: spec,
             kv_allocation: q.kv_allocation || (engine ? engine.kv_allocation : "reserved") };
  }

  // The engines' conventions (pair-data's "engines", from the engine table): the cache allocation and
  // the runtime overhead O where it was left to the engine (api.make_workload, Workload.for_hardware).
  var ENGINES = {};
  function defaultOverheadGb(data, q) {
    var e = q.engine && ENGINES[q.engine];
    if (!e || e.overhead === "row" || e.memory_fraction === null) return data.default_overhead_gb;
    var base = data.hardware.memory_bytes - (e.overhead === "fraction_of_free" ? data.full_resident_bytes : 0);
    return Math.max(0, (1 - e.memory_fraction) * base) / 1e9;
  }
  // Weights in host RAM: the inputs that place them (pair-data's "offload_inputs", core.offload's
  // OFFLOAD_INPUTS; the static copy does not compute two tiers).
  var OFFLOAD = [];
  function offloadKey(q) {
    return OFFLOAD.map(function (n) { var v = q[n]; return v === null || v === undefined || v === false ? "" : String(v); }).join("|");
  }
  function offloadAsked(q) { return offloadKey(q).replace(/\|/g, "") !== ""; }

  function decode(hw, m, q) {
    return calc.decode(hw, m, workloadOf(q));
  }

  function rates(hw, p) {
    return calc.rates(hw, p);
  }

  function prefillAt(hw, m, L, traffic, r) {
    var w = { overhead_bytes: 0, alloc_context: L, expert_traffic: traffic };
    return calc.prefillCurve(hw, m, w, [L], 1)[0];
  }

  function prefill(hw, m, q) {
    if (!m.prefill) return null;
    var w = workloadOf(q);
    var out = calc.prefill(hw, m, w, { prompt: q.prompt, batch: 1, chunk: null, ttft_budget: null });
    var range = calc.prefillRange(hw, m, w, 1);
    out.range = range.verdict === "fits" ? range : null;
    // As prefill --json: where nothing fits (no_resident_fit, no_session_fit) there is no wait to report.
    if (NOTHING_FITS[out.verdict]) { var kept = out.range; out = noWait(out); out.range = kept; }
    return out;
  }

  function decodeCurve(hw, m, q, batches) {
    return calc.decodeCurve(hw, m, workloadOf(q), batches);
  }

  // ---------------------------------------------------------------- formatting (the CLI's formats)
  function grouped(v, digits) {
    return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  var FMT = {
    rate: function (v) { return v === null || v === undefined ? "n/a" : (v >= 100 ? grouped(v, 0) : grouped(v, 1)) + " tok/s"; },
    gb: function (v) { return v === null || v === undefined ? "n/a" : grouped(v / 1e9, 3) + " GB"; },
    int: function (v) { return v === null || v === undefined ? "n/a" : grouped(v, 0); },
    int0: function (v) { return v === null || v === undefined ? "n/a" : grouped(v, 0); },
    s: function (v) { return v === null || v === undefined ? "n/a" : (v >= 1 ? grouped(v, 2) + " s" : grouped(v * 1e3, 1) + " ms"); },
    // a first-token wait: none where nothing fits (prefill --json gives time_s null there)
    wait: function (v) { return v === null || v === undefined ? "nothing fits" : FMT.s(v); },
    num: function (v) { return v === null || v === undefined ? "n/a" : String(+v); },
    gbs: function (v) { return v === null || v === undefined ? "n/a" : grouped(v / 1e9, 1) + " GB/s"; }
  };
  // Where the site is served from: "" at a domain's root, "/sub" for build-site --base-url https://host/sub.
  var BASE = (document.documentElement.getAttribute("data-base") || "").replace(/\/$/, "");
  // Verdicts under which nothing fits in memory: no prompt is processed, so there is no wait.
  var NOTHING_FITS = { no_resident_fit: true, no_session_fit: true };
  function noWait(p) {
    if (!p) return p;
    var out = {};
    for (var k in p) if (p.hasOwnProperty(k)) out[k] = p[k];
    ["time_s", "tok_s", "memory_tok_s", "compute_tok_s", "memory_time_s", "compute_time_s", "linear_time_s",
     "attention_time_s", "bound_by", "ttft_ok"].forEach(function (k) { out[k] = null; });
    return out;
  }
  function shortNumber(v) {
    var a = Math.abs(v), units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) if (a >= units[i][0]) return +(v / units[i][0]).toPrecision(6) + units[i][1];
    return a >= 1 || a === 0 ? String(+v.toPrecision(6)) : String(+v.toPrecision(3));
  }

  // ---------------------------------------------------------------- charts (the server's layout)
  // figures.render_chart's layout: the x marks' labels in rows above the plot, the legend under it.
  var W = 640, LEFT = 70, RIGHT = 20, PLOT_H = 236, MARK_TOP = 8, MARK_ROW = 24, LEGEND_X = 8, LEGEND_ROW = 24, CHAR_PX = 12;
  var SVGNS = "http://www.w3.org/2000/svg";

  var axes = window.servebound_chart_axes;  // chart_axes.js, loaded before this file
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

  // ---------------------------------------------------------------- the page
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

  function lookup(obj, key) {
    return key.split(".").reduce(function (o, k) { return o === null || o === undefined ? null : o[k]; }, obj);
  }

  function showNumbers(data, d, p, q) {
    var all = { prefill: NOTHING_FITS[d.verdict] ? noWait(p) : p, floor_tok_s: q.floor };
    for (var k in d) if (d.hasOwnProperty(k)) all[k] = d[k];
    all.verdict_text = data.verdicts[d.verdict];
    all.fits_text = d.verdict === "floor_fit" || d.verdict === "no_floor" ? "Yes: " + FMT.int(d.batch_mem) + (d.batch_mem === 1 ? " session fits" : " sessions fit") : data.verdicts[d.verdict];
    all.overhead_bytes = (d.assumptions ? d.assumptions.overhead_gb : data.query.overhead_gb) * 1e9;
    all.capacity_bytes = data.hardware.memory_bytes;
    document.querySelectorAll("#results [data-k]").forEach(function (node) {
      var v = lookup(all, node.getAttribute("data-k"));
      var f = node.getAttribute("data-f");
      node.textContent = f ? FMT[f](v) : (v === null || v === undefined ? "n/a" : String(v));
    });
    var verdict = document.querySelector("#results .verdict");
    if (verdict) verdict.className = "verdict v " + d.verdict;
    var block = document.getElementById("offload-answer");
    if (block) block.hidden = !d.offload;
  }

  // Static copy with weights in host RAM: no number is computed here; the page says where they come from.
  function showOffloadUncomputed() {
    document.querySelectorAll("#results [data-k]").forEach(function (node) {
      if (node.closest("#format-support")) return;
      node.textContent = "n/a";
    });
    var block = document.getElementById("offload-answer"), note = document.getElementById("offload-static");
    if (block) block.hidden = false;
    if (note) note.hidden = false;
    var verdict = document.querySelector("#results .verdict");
    if (verdict) { verdict.className = "verdict v"; verdict.textContent = "Weights in host RAM: computed by the server (servebound serve, /api/decode) or the CLI, not by this static copy."; }
  }

  // The workload inputs come from pair-data's "inputs" (servebound.web.query.page_inputs, from the one
  // declaration): each field's kind and default, and the names the page, /api/decode and /api/prefill take.
  function readForm(form, data) {
    var fd = new FormData(form), q = {};
    data.inputs.fields.forEach(function (f) {
      var raw = fd.get(f.name);
      if (f.kind === "bool") { q[f.name] = raw !== null && raw !== ""; return; }
      raw = raw === null ? "" : String(raw).trim();
      if (raw === "") q[f.name] = f.default;
      else q[f.name] = f.kind === "int" ? parseInt(raw, 10) : f.kind === "float" ? parseFloat(raw) : raw;
    });
    if (fd.get("maximize")) q.batch = null;
    // O left to the default (the row's, or the engine's convention) until its slider is moved.
    var slider = form.querySelector("[name=overhead_gb]");
    q.overhead_given = !slider || slider.dataset.given === "1";
    if (!q.overhead_given) q.overhead_gb = defaultOverheadGb(data, q);
    if (q.read_context > q.alloc_context) q.read_context = q.alloc_context;
    var limit = data.model.context_limit;
    if (q.prompt > q.alloc_context) q.prompt = q.alloc_context;
    if (limit && q.prompt > limit) q.prompt = limit;
    return q;
  }

  // The query string of the inputs ``names`` (one of pair-data's lists); speculation only with a draft.
  function queryString(q, names) {
    var spec = { draft_tokens: 1, acceptance: 1, tokens_per_step: 1 };
    return names.filter(function (n) {
      var v = q[n];
      return v !== null && v !== undefined && v !== false && v !== "" && !(spec[n] && !q.draft) &&
        !(n === "overhead_gb" && !q.overhead_given);
    }).map(function (n) { return n + "=" + encodeURIComponent(q[n]); }).join("&");
  }

  function fetchJSON(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (r) {
      return r.json().then(function (body) { if (!r.ok) throw new Error(body.error ? body.error.field + ": " + body.error.message : r.statusText); return body; });
    });
  }

  // A computed page's folded sections (pair_records.SECTIONS on the server): each is filled from its
  // fragment, the server's HTML of that section for the page's workload, the first time it is opened;
  // charts that arrive after the sliders moved are redrawn for the form's workload (``redraw``).
  var redraw = null;
  function wireFolds() {
    document.querySelectorAll("details.fold[data-fragment]").forEach(function (details) {
      details.addEventListener("toggle", function () {
        if (!details.open || details.dataset.loaded) return;
        details.dataset.loaded = "loading";
        var body = details.querySelector(".fold-body");
        body.setAttribute("aria-busy", "true");
        fetch(BASE + details.dataset.fragment, { headers: { Accept: "text/html" } }).then(function (r) {
          if (!r.ok) throw new Error("the section did not load (" + r.status + ")");
          return r.text();
        }).then(function (html) {
          body.innerHTML = html;
          details.dataset.loaded = "1";
          body.querySelectorAll("svg.chart").forEach(attachHover);
          if (redraw) redraw();
        }).catch(function (err) {
          delete details.dataset.loaded;
          var note = document.createElement("p");
          note.className = "note";
          note.textContent = String(err.message || err);
          body.appendChild(note);
        }).then(function () { body.removeAttribute("aria-busy"); });
      });
    });
  }

  var pending = 0, drafts = {};
  function recompute(form, data) {
    var q = readForm(form, data);
    if (q.draft && document.body.dataset.mode === "static") {
      // The static copy computes speculation in the browser: the draft's adapter comes from /data/models/.
      if (!drafts[q.draft]) {
        fetchJSON(BASE + "/data/models/" + encodeURIComponent(q.draft) + ".json").then(function (j) {
          drafts[q.draft] = j; recompute(form, data);
        }).catch(function (err) {
          var note = document.getElementById("calc-status");
          if (note) note.textContent = "draft: no model " + q.draft + " (" + (err.message || err) + ")";
        });
        return;
      }
      q.draftModel = drafts[q.draft];
    }
    var ticket = ++pending;
    // With weights in host RAM the browser's curves would need the two tiers: figures stay the server's
    // (for the workload the page loaded with) and say so; the served site's numbers come from the API.
    var twoTier = offloadAsked(q) || offloadAsked(data.query);
    var local = twoTier ? null : decode(data.hardware, data.model, q);
    var localPre = twoTier ? null : prefill(data.hardware, data.model, q);
    var note = document.getElementById("calc-status");
    var stale = document.getElementById("stale-work");
    var staleFigures = document.getElementById("stale-figures");
    var pageUrl = location.pathname.replace(/\.md$/, "") + "?" + (data.calculator ?
      "hardware=" + encodeURIComponent(data.hardware.id) + "&model=" + encodeURIComponent(data.model.id) + "&" : "") +
      queryString(q, data.inputs.page) +
      (data.model.native === false && document.body.dataset.mode === "static" && !data.calculator ? "&profile=" + encodeURIComponent(data.model.id) : "");
    if (stale) { stale.hidden = false; stale.querySelector("a").setAttribute("href", pageUrl); }
    if (staleFigures) { staleFigures.hidden = !twoTier; staleFigures.querySelector("a").setAttribute("href", pageUrl); }
    var slider = form.querySelector("[name=overhead_gb]");
    function showOverhead(gb) {
      if (!slider || q.overhead_given || gb === null || gb === undefined) return;
      if (Number(slider.max) < gb) slider.max = Math.ceil(gb);
      slider.value = gb;
      var out = slider.parentNode.querySelector("output");
      if (out) out.textContent = (+gb.toPrecision(6)).toLocaleString("en-US");
    }
    if (document.body.dataset.mode === "server") {
      var ids = "hardware=" + encodeURIComponent(data.hardware.id) + "&model=" + encodeURIComponent(data.model.id);
      var calls = [fetchJSON(BASE + "/api/decode?" + ids + "&" + queryString(q, data.inputs.decode))];
      if (data.model.prefill) calls.push(fetchJSON(BASE + "/api/prefill?" + ids + "&" + queryString(q, data.inputs.prefill) + "&range=true"));
      Promise.all(calls).then(function (res) {
        if (ticket !== pending) return;
        var d = res[0], p = res[1] || null;
        showNumbers(data, d, p, q);
        showOverhead(d.assumptions ? d.assumptions.overhead_gb : null);
        redraw = twoTier ? null : function () { drawFigures(data, q, d, p || localPre); };
        if (redraw) redraw();
        if (note) note.textContent = "Numbers from the JSON API.";
        document.body.setAttribute("data-computed", "api");
      }).catch(function (err) { if (note) note.textContent = String(err.message || err); });
    } else if (twoTier) {
      showOffloadUncomputed();
      if (note) note.textContent = "Weights in host RAM: not computed in this static copy (the served site and the CLI compute them).";
      document.body.setAttribute("data-computed", "none");
    } else {
      showNumbers(data, local, localPre, q);
      showOverhead(q.overhead_gb);
      var fs = document.querySelector("#format-support [data-k=format_support]"), fw = document.querySelector("#format-support [data-k=format_support_why]");
      var support = !data.calculator && data.format_support[q.engine || ""];
      if (fs && support) { fs.textContent = support[0]; fw.textContent = support[1]; }
      drawFigures(data, q, local, localPre);
      if (note) note.textContent = "Numbers computed in your browser.";
      document.body.setAttribute("data-computed", "browser");
    }
    history.replaceState(null, "", pageUrl);
  }

  function init() {
    // The static copy's calculator (/pair/?hardware=..&model=..): a pair with a page goes there, any
    // other pair is computed here from the exported catalog data.
    if (document.getElementById("calc-host")) { calculator(); return; }
    document.querySelectorAll("svg.chart").forEach(attachHover);
    wireFolds();
    var holder = document.getElementById("pair-data"), form = document.getElementById("workload");
    if (!holder || !form) return;
    var data = JSON.parse(holder.textContent);
    var status = wire(form, data);
    // The static copy has no server to read the URL: a shared link's workload is applied here, so the
    // page shows the numbers its URL names (the served site renders them from the query already).
    var fromUrl = document.body.dataset.mode === "static" && applyQuery(form, new URLSearchParams(location.search), data);
    if (document.body.dataset.mode === "static") noteUnused(new URLSearchParams(location.search), data);
    var profile = new URLSearchParams(location.search).get("profile");
    if (profile && profile !== data.model.id && document.body.dataset.mode === "static") {
      fetchJSON(BASE + "/data/models/" + encodeURIComponent(profile) + ".json").then(function (j) {
        data.model = j;
        var h1 = document.querySelector("main h1");
        if (h1) h1.firstChild.textContent = j.name + " on ";
        var details = document.getElementById("advanced");
        if (details) details.open = true;
        recompute(form, data);
      }).catch(function (err) { status.textContent = "Could not load profile " + profile + ": " + err; });
    } else if (fromUrl) {
      recompute(form, data);
    }
  }

  // A page of the copy by its site path ("pair/H/M"): the folder, or its index.html where the copy
  // was opened from file:// (a browser opens no folder index there).
  function pageHref(path) {
    return BASE + "/" + path + (location.protocol === "file:" ? "/index.html" : "/");
  }

  // The calculator: the pair from the address (or the picker), computed in the browser.
  function calculator() {
    var sp = new URLSearchParams(location.search), H = sp.get("hardware"), M = sp.get("model");
    var pick = document.getElementById("calc-pick"), fallback = document.getElementById("calc-fallback");
    var noscript = document.getElementById("calc-noscript");
    if (noscript) noscript.hidden = true;
    if (pick) {
      if (H) pick.elements.hardware.value = H;
      if (M) pick.elements.model.value = M;
    }
    if (!H || !M) return;
    var say = function (text) {
      var p = document.getElementById("calc-error") || document.createElement("p");
      p.id = "calc-error";
      p.className = "verdict v no_resident_fit";
      p.textContent = text;
      if (!p.parentNode) fallback.insertBefore(p, fallback.firstChild);
    };
    Promise.all([
      fetchJSON(BASE + "/data/models/" + encodeURIComponent(M) + ".json").catch(function () { throw new Error("no model " + M + " on this copy"); }),
      fetchJSON(BASE + "/data/hardware/" + encodeURIComponent(H) + ".json").catch(function () { throw new Error("no hardware " + H + " on this copy"); })
    ]).then(function (res) {
      var model = res[0], hw = res[1];
      var rest = new URLSearchParams(location.search);
      rest.delete("hardware"); rest.delete("model");
      if (model.exported_hardware.indexOf(H) >= 0) {
        var tail = rest.toString();
        location.replace(pageHref("pair/" + encodeURIComponent(H) + "/" + encodeURIComponent(M)) + (tail ? "?" + tail : ""));
        return;
      }
      var holder = document.getElementById("pair-data"), form = document.getElementById("workload");
      var data = JSON.parse(holder.textContent);
      data.hardware = hw; data.model = model; data.calculator = true;
      // The engine conventions' bases are this pair's, not the reference page's (defaultOverheadGb).
      data.default_overhead_gb = hw.overhead_gb; data.full_resident_bytes = model.resident_bytes;
      // The defaults this pair takes: the machine's overhead, the contexts capped at the model's limit.
      var dflt = JSON.parse(document.getElementById("calc-host").getAttribute("data-defaults"));
      data.inputs.fields.forEach(function (f) { if (f.default !== null && !(f.name in dflt)) dflt[f.name] = f.default; });
      var limit = model.context_limit, alloc = limit ? Math.min(dflt.alloc_context, limit) : dflt.alloc_context;
      var values = { alloc_context: alloc, read_context: Math.min(dflt.read_context, alloc), overhead_gb: hw.overhead_gb,
        prompt: Math.max(1, Math.min(dflt.prompt, alloc)), floor: dflt.floor };
      data.query = Object.assign({}, data.query, values, { batch: null });
      Object.keys(values).forEach(function (name) {
        var input = form.querySelector("[name=" + name + "]");
        if (!input) return;
        if (input.max !== "" && Number(input.max) < Number(values[name])) input.max = values[name];
        input.value = values[name];
        var out = input.parentNode.querySelector("output");
        if (out) out.textContent = Number(values[name]).toLocaleString("en-US");
      });
      var maximize = document.getElementById("maximize");
      if (maximize) maximize.checked = true;
      form.setAttribute("action", "");
      var h1 = document.querySelector("#calc-host h1");
      if (h1) {
        h1.firstChild.textContent = model.name + " on ";
        var a = h1.querySelector("a");
        if (a) { a.textContent = hw.name; a.setAttribute("href", pageHref("hardware/" + encodeURIComponent(H))); }
      }
      document.title = model.name + " on " + hw.name + " · servebound";
      // What the script cannot redo for another pair: the reference pair's runs, cost, worked steps,
      // links, memory bar and the engines' format support (the reference machine's).
      ["#calc-host .sub", "#calc-host .sideways", "#measured", "#cost", "#calc-host .work", "#fig-memory", "#format-support"].forEach(function (sel) {
        var node = document.querySelector(sel);
        if (node) (node.closest("figure") || node).hidden = true;
      });
      var reset = form.querySelector("a");
      if (reset) reset.setAttribute("href", location.pathname + "?hardware=" + encodeURIComponent(H) + "&model=" + encodeURIComponent(M));
      document.getElementById("calc-host").hidden = false;
      fallback.hidden = true;
      var title = document.getElementById("calc-title");
      if (title) title.hidden = true;
      wire(form, data);
      applyQuery(form, rest, data);
      recompute(form, data);
    }).catch(function (err) { say(String(err.message || err)); });
  }

  // The form's controls recompute as they move; returns the status line the numbers' source is named in.
  function wire(form, data) {
    ENGINES = data.engines || {};
    OFFLOAD = data.offload_inputs || [];
    var overheadSlider = form.querySelector("[name=overhead_gb]");
    if (overheadSlider) {
      overheadSlider.dataset.given = data.query.overhead_given ? "1" : "0";
      overheadSlider.addEventListener("input", function () { overheadSlider.dataset.given = "1"; });
    }
    var engineSelect = form.querySelector("[name=engine]"), allocation = form.querySelector("[name=kv_allocation]");
    // An engine sets the cache allocation: choosing one puts the allocation back to its default.
    if (engineSelect && allocation) engineSelect.addEventListener("change", function () { allocation.value = ""; });
    var maximize = document.getElementById("maximize"), batch = document.getElementById("batch");
    var status = document.createElement("p");
    status.id = "calc-status";
    status.className = "note";
    status.setAttribute("aria-live", "polite");
    form.appendChild(status);
    form.querySelectorAll("input[type=range]").forEach(function (input) {
      input.addEventListener("input", function () {
        var out = input.parentNode.querySelector("output");
        if (out) out.textContent = Number(input.value).toLocaleString("en-US");
        if (input === batch && maximize) maximize.checked = false;
        recompute(form, data);
      });
    });
    form.querySelectorAll("input[type=checkbox], input[type=number], input[type=text], select").forEach(function (input) {
      input.addEventListener("change", function () { recompute(form, data); });
    });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); recompute(form, data); });
    return status;
  }

  // Set the form from a URL's workload parameters (the declared inputs' names); true if any was set.
  function applyQuery(form, sp, data) {
    var any = false;
    data.inputs.fields.forEach(function (f) {
      var value = sp.get(f.name), input = form.querySelector("[name=" + f.name + "]");
      if (value === null || value === "" || !input) return;
      if (input.tagName === "SELECT") {
        if (!Array.prototype.some.call(input.options, function (o) { return o.value === value; })) return;
        input.value = value;
      } else if (input.type === "checkbox") {
        input.checked = value === "true";
      } else if (input.type === "text") {
        input.value = value;
      } else {
        if (!isFinite(Number(value))) return;
        if (input.max !== "" && Number(input.max) < Number(value)) input.max = value;
        input.value = value;
        var out = input.parentNode.querySelector("output");
        if (out) out.textContent = Number(input.value).toLocaleString("en-US");
        if (f.name === "overhead_gb") input.dataset.given = "1";
        if (f.name === "batch") { var maximize = document.getElementById("maximize"); if (maximize) maximize.checked = false; }
      }
      any = true;
    });
    return any;
  }

  // The static copy has no server to name a misspelt workload field: it is named here (tracking tags aside).
  function noteUnused(sp, data) {
    var unused = [];
    sp.forEach(function (v, k) {
      if (data.inputs.page.indexOf(k) < 0 && data.inputs.quiet.indexOf(k) < 0 && k.indexOf("utm_") !== 0) unused.push(k);
    });
    var results = document.getElementById("results");
    if (!unused.length || !results || document.getElementById("ignored-params")) return;
    var p = document.createElement("p");
    p.id = "ignored-params";
    p.className = "note";
    p.textContent = "Not used: " + unused.join(", ") + ": not a workload field of this page (the page shows the numbers without it).";
    results.parentNode.insertBefore(p, results);
  }

  window.servebound = { decode: decode, prefill: prefill, maxContextWithin: calc.maxContextWithin };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
