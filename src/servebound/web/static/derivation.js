/* /derivation's live controls: the toy setup's figures redrawn in place as a control moves.
 *
 * The page works without this file: the server draws every figure (servebound.web.figures.derivation)
 * at the text's defaults or at the query's parameters, and the controls are a GET form. This file turns
 * that form into live controls, on the served site and on the static export alike (no round trip):
 *   - every number comes from calc.js (the one port of the core, checked against its conformance
 *     vectors under Node): the boards' rates, b_mem, the memory-power bound, the sweeps, L_read;
 *   - the figures are re-rendered as the same SVG markup the server writes for the same parameters
 *     (a port of derivation_figures here; figures.render_chart and Python's number formats in
 *     chart_markup.js); tests/web/test_browser.py compares the two element by element;
 *   - what the controls are (names, limits, slider spans, the parameters drawn) comes from the server,
 *     in the form's data-toy attribute.
 */
(function (root) {
  "use strict";

  // calc.js loads first on the page; under Node (tests/web/run_derivation.js) it is required
  var calc = root.servebound_calc || (typeof require === "function" ? require("./calc.js") : null);
  // and so are chart_axes.js (a character's width) and chart_markup.js (Python's formats, render_chart)
  var axes = root.servebound_chart_axes || (typeof require === "function" ? require("./chart_axes.js") : null);
  var markup = root.servebound_chart_markup || (typeof require === "function" ? require("./chart_markup.js") : null);
  var fixed = markup.fixed, group = markup.group, num = markup.num, int = markup.int, fmtG = markup.fmtG;
  var pyRepr = markup.pyRepr, esc = markup.esc, renderChart = markup.renderChart;
  var GB = 1e9;

  // ---------------------------------------------------------------- numpy's grids
  function linspace(start, stop, n) {
    var out = [], step = (stop - start) / (n - 1);
    for (var i = 0; i < n; i++) out.push(i * step + start);
    out[n - 1] = stop;
    return out;
  }
  function geomspace(start, stop, n) {
    var out = linspace(Math.log10(start), Math.log10(stop), n).map(function (y) { return Math.pow(10, y); });
    out[0] = start;
    out[n - 1] = stop;
    return out;
  }
  function rint(x) {
    var f = Math.floor(x);
    return x - f === 0.5 ? (f % 2 === 0 ? f : f + 1) : Math.round(x);
  }
  function unique(xs) {
    var sorted = xs.slice().sort(function (a, b) { return a - b; }), out = [];
    sorted.forEach(function (x) { if (!out.length || out[out.length - 1] !== x) out.push(x); });
    return out;
  }

  // ---------------------------------------------------------------- the toy through calc.js
  function hardware(t) {
    return { memory_bytes: t.capacity_gb * GB, bandwidth_bytes_per_s: t.bandwidth_gb_per_s * GB, compute_flop_per_s: {} };
  }
  function shape(perToken) { return { global: perToken, local: 0, window: 0, state: 0 }; }
  function model(t, privateReads, weightsGb) {
    var kv = t.kv_gb_per_1k * GB / 1000.0, w = (weightsGb === undefined ? t.weights_gb : weightsGb) * GB;
    return { always_on_bytes: w, expert_bytes: 0, routed: 0, per_token: 0, resident_bytes: w,
             kv_alloc: shape(kv), kv_read: privateReads ? shape(kv) : shape(0), context_limit: null, prefill: null };
  }
  function readOf(t, reserved) { return calc.readFollowing(reserved, t.fraction, t.unread_cap); }
  function workload(t, reserved, batch) {
    return { overhead_bytes: t.overhead_gb * GB, alloc_context: reserved, read_context: readOf(t, reserved),
             floor: 0.0, batch: batch, expert_traffic: "expected", speculation: null };
  }

  /* servebound.web.pages.derivation_toy.boards */
  function boards(t) {
    var hw = hardware(t), full = calc.decode(hw, model(t, true), workload(t, t.reserved, null));
    var bmem = full.batch_mem || 0, batch = t.batch !== null ? t.batch : Math.max(bmem, 1);
    var right = calc.decode(hw, model(t, true), workload(t, t.reserved, batch));
    var left = calc.decode(hw, model(t, false), workload(t, t.reserved, batch));
    return { batch: batch, batch_mem: bmem, memory_power_tok_s: full.memory_power_tok_s,
             left_tok_s: left.forced.aggregate_tok_s, right_tok_s: right.forced.aggregate_tok_s,
             left_bytes: t.weights_gb * GB, right_bytes: t.weights_gb * GB + batch * right.kv_read_bytes,
             kv_alloc_bytes: right.kv_alloc_bytes, kv_read_bytes: right.kv_read_bytes };
  }

  /* maximize mode at each reservation (or weight size): b_mem, the memory-power bound and the KV-aware
   * aggregate at b_mem (with no floor, b* is b_mem); NaN where no session fits */
  function sweepPoint(t, reserved, weightsGb) {
    var d = calc.decode(hardware(t), model(t, true, weightsGb), workload(t, reserved, null));
    var fits = d.batch_mem !== null && d.batch_mem >= 1;
    return { mp: fits ? d.memory_power_tok_s : NaN, kv: fits ? d.aggregate_tok_s : NaN };
  }

  // ---------------------------------------------------------------- derivation_figures
  function feasibilitySvg(C, R) {
    var width = 640, height = 300, left = 70, bottom = 46, top = 18, right = 20;
    var sx = (width - left - right) / (C * 1.5), sy = (height - top - bottom) / (R * 1.5);
    var X = function (h) { return left + h * sx; }, Y = function (r) { return height - bottom - r * sy; };
    var area = C * R, out = [
      '<svg class="chart derivation" id="fig-feasibility" viewBox="0 0 ' + width + " " + height + '" role="img" ' +
      'aria-labelledby="fig-feasibility-t">',
      '<title id="fig-feasibility-t">Feasible workloads (h, r) on a machine with C = ' + num(C) + " GB and R = " + num(R) +
      " GB/s: a rectangle of area C R = " + num(area) + " GB²/s</title>",
      '<rect class="feasible" x="' + fixed(X(0), 1) + '" y="' + fixed(Y(R), 1) + '" width="' + fixed(C * sx, 1) + '" height="' +
      fixed(R * sy, 1) + '"><title>feasible: h &lt;= C and r &lt;= R</title></rect>',
      '<text class="label" x="' + fixed(X(C / 2), 1) + '" y="' + fixed(Y(R / 2), 1) + '" text-anchor="middle">area C R = ' +
      num(area) + " GB²/s</text>",
      '<line class="axis" x1="' + left + '" x2="' + (width - right) + '" y1="' + (height - bottom) + '" y2="' + (height - bottom) + '"/>',
      '<line class="axis" x1="' + left + '" x2="' + left + '" y1="' + top + '" y2="' + (height - bottom) + '"/>',
      '<text class="label" x="' + pyRepr((left + width - right) / 2) + '" y="' + (height - 8) + '" text-anchor="middle">resident state h (GB)</text>',
      '<text class="label" transform="translate(14 ' + pyRepr((top + height - bottom) / 2) + ') rotate(-90)" text-anchor="middle">flow r (GB/s)</text>'
    ];
    linspace(0, C * 1.5, 7).forEach(function (h) {
      out.push('<text class="tick" x="' + fixed(X(h), 1) + '" y="' + (height - bottom + 16) + '" text-anchor="middle">' + num(h) + "</text>");
    });
    linspace(0, R * 1.5, 7).forEach(function (r) {
      out.push('<text class="tick" x="' + (left - 6) + '" y="' + fixed(Y(r) + 4, 1) + '" text-anchor="end">' + num(r) + "</text>");
    });
    out.push('<g class="mark bmem"><line x1="' + fixed(X(C), 1) + '" x2="' + fixed(X(C), 1) + '" y1="' + top + '" y2="' + (height - bottom) +
      '"/><text x="' + fixed(X(C) + 4, 1) + '" y="' + (top + 12) + '">h = C</text></g>' +
      '<g class="mark bstar"><line x1="' + left + '" x2="' + (width - right) + '" y1="' + fixed(Y(R), 1) + '" y2="' + fixed(Y(R), 1) +
      '"/><text x="' + (width - right - 4) + '" y="' + fixed(Y(R) - 4, 1) + '" text-anchor="end">r = R</text></g>');
    [[C * 0.5, R * 0.7, "fits", "feasible"], [C * 1.3, R * 0.4, "capacity failure: h > C", "fail"],
     [C * 0.3, R * 1.3, "flux failure: r > R", "fail"]].forEach(function (p) {
      var h = p[0], r = p[1], rightSide = X(h) > width - 200;
      var tx = rightSide ? X(h) - 8 : X(h) + 8, anchor = rightSide ? "end" : "start";
      out.push('<g class="point ' + p[3] + '"><circle cx="' + fixed(X(h), 1) + '" cy="' + fixed(Y(r), 1) + '" r="5"/>' +
        '<text x="' + fixed(tx, 1) + '" y="' + fixed(Y(r) + 4, 1) + '" text-anchor="' + anchor + '">' + esc(p[2]) + "</text>" +
        "<title>workload h = " + num(h) + " GB, r = " + num(r) + " GB/s: " + esc(p[2]) + "</title></g>");
    });
    out.push("</svg>");
    return out.join("");
  }

  var COLS = 24, ROWS = 16, CHAR_PX = axes.CHAR_PX;

  function boardsSvg(t, b) {
    var width = 640, height = 402, boardW = 300, boardH = 200, boardY = 60, cells = COLS * ROWS;
    var usable = (t.capacity_gb - t.overhead_gb) * GB, cellBytes = usable / cells;
    var cw = boardW / COLS, ch = boardH / ROWS;
    var weightCells = rint(t.weights_gb * GB / cellBytes), perSession = b.kv_alloc_bytes / cellBytes;
    var readShare = b.kv_alloc_bytes > 0 ? b.kv_read_bytes / b.kv_alloc_bytes : 0.0;
    var fitting = Math.min(b.batch, b.batch_mem), overflow = b.batch - fitting;
    var out = [
      '<svg class="chart derivation boards" id="fig-boards" viewBox="0 0 ' + width + " " + height + '" role="img" ' +
      'aria-labelledby="fig-boards-t">',
      '<title id="fig-boards-t">The two bounds side by side at batch ' + int(b.batch) + ": memory-power accounting " +
      num(b.left_tok_s) + " tok/s, KV-aware " + num(b.right_tok_s) + " tok/s</title>"
    ];
    [["left", 10], ["right", 330]].forEach(function (sd) {
      var side = sd[0], x0 = sd[1], chargeReads = side === "right";
      out.push('<text class="label board-title" x="' + x0 + '" y="20">' + (side === "left" ? "memory-power accounting" : "KV-aware bound") + "</text>");
      out.push('<text class="tick" x="' + x0 + '" y="36">' + (side === "left" ? "weights only" : "weights + every session’s reads") +
        '</text><text class="tick" x="' + x0 + '" y="52">charged per iteration</text>');
      for (var i = 0; i < cells; i++) {
        var x = x0 + (i % COLS) * cw, y = boardY + Math.floor(i / COLS) * ch, css;
        if (i < weightCells) css = "cell w lit";
        else {
          var pos = perSession > 0 ? (i - weightCells + 0.5) / perSession : Infinity, session = Math.trunc(pos);
          if (session >= fitting) css = "cell free";
          else css = "cell kv s" + (session % 2) + (chargeReads && pos - session < readShare ? " lit" : "");
        }
        out.push('<rect class="' + css + '" x="' + fixed(x, 1) + '" y="' + fixed(y, 1) + '" width="' + fixed(cw - 1, 1) +
          '" height="' + fixed(ch - 1, 1) + '"/>');
      }
      var moved = side === "left" ? b.left_bytes : b.right_bytes, rate = side === "left" ? b.left_tok_s : b.right_tok_s;
      out.push('<text class="counter" x="' + x0 + '" y="' + (boardY + boardH + 22) + '" data-k="' + side + '_tok_s">' + num(rate) +
        " tok/s</text>" + '<text class="tick" x="' + x0 + '" y="' + (boardY + boardH + 38) + '">' + group(fixed(moved / GB, 1)) +
        " GB moved per iteration</text>" +
        '<text class="tick" x="' + x0 + '" y="' + (boardY + boardH + 54) + '">batch ' + int(b.batch) + "</text>");
      if (overflow > 0) {
        out.push('<rect class="cell nofit" x="' + x0 + '" y="' + (boardY + boardH + 60) + '" width="' + boardW + '" height="10"/>' +
          '<text class="tick fail" x="' + x0 + '" y="' + (boardY + boardH + 82) + '">' + int(overflow) + (overflow === 1 ? " session does" : " sessions do") + " not fit</text>");
      }
    });
    var line = b.memory_power_tok_s !== null
      ? "memory-power bound (maximize batch, b_mem = " + int(b.batch_mem) + "): " + num(b.memory_power_tok_s) + " tok/s"
      : "memory-power bound undefined: no session fits";
    out.push('<text class="label" x="10" y="' + (height - 42) + '" data-k="memory_power_tok_s">' + esc(line) + "</text>");
    var lx = 10.0, ly = height - 15;
    [["w lit", "weights"], ["kv s0", "KV reserved"], ["kv s0 lit", "KV read per iteration"], ["free", "free"]].forEach(function (l) {
      var span = 14 + CHAR_PX * l[1].length;  // wrapped at the phone font's width
      if (lx > 10 && lx + span > width - 10) { lx = 10.0; ly += 24; }
      out.push('<g class="legend"><rect class="cell ' + l[0] + '" x="' + fixed(lx, 1) + '" y="' + (ly - 9) + '" width="10" height="10"/>' +
        '<text x="' + fixed(lx + 14, 1) + '" y="' + ly + '">' + esc(l[1]) + "</text></g>");
      lx += span + 14;
    });
    out.push('<text class="tick" x="' + (width - 10) + '" y="' + (ly + 24) + '" text-anchor="end">reserved ' + int(t.reserved) +
      ", read " + int(readOf(t, t.reserved)) + " tokens</text>");
    out[0] = out[0].replace('viewBox="0 0 ' + width + " " + height + '"', 'viewBox="0 0 ' + width + " " + (ly + 34) + '"');
    out.push("</svg>");
    return out.join("");
  }

  function readContextChart(t) {
    var reserved = unique(geomspace(1000, 1000000, 80).map(rint));
    var read = reserved.map(function (r) { return readOf(t, r); });
    return renderChart({
      id: "fig-read-context",
      title: "Read context following the reservation at " + fixed(t.fraction * 100, 0) + "%, unread rest capped at " + int(t.unread_cap),
      xLabel: "reserved context L_alloc (tokens)", yLabel: "read context L_read (tokens)",
      series: [{ name: "L_read", x: reserved, y: read, css: "agg", unit: "tokens" },
               { name: "L_alloc (all read)", x: reserved, y: reserved, css: "mem", unit: "tokens" }],
      xLog: true, yLog: true, xMarks: [{ value: t.reserved, label: "reserved " + int(t.reserved), css: "forced" }], xUnit: "tokens"
    });
  }

  function reservationChart(t) {
    var reserved = unique(geomspace(500, 1000000, 120).map(rint));
    var pts = reserved.map(function (r) { return sweepPoint(t, r); });
    var lastFit = Math.floor((t.capacity_gb - t.weights_gb - t.overhead_gb) / t.kv_gb_per_1k * 1000);
    return renderChart({
      id: "fig-containers",
      title: "Memory-power bound and KV-aware aggregate at the largest fitting batch, against the reservation",
      xLabel: "reserved context L_alloc (tokens)", yLabel: "tok/s",
      series: [{ name: "memory-power bound", x: reserved, y: pts.map(function (p) { return p.mp; }), css: "mem", unit: "tok/s" },
               { name: "KV-aware at b_mem", x: reserved, y: pts.map(function (p) { return p.kv; }), css: "agg", unit: "tok/s" }],
      xLog: true, yLog: true,
      xMarks: [{ value: t.reserved, label: "reserved " + int(t.reserved), css: "forced" },
               { value: lastFit, label: "one session stops fitting past " + int(lastFit), css: "bmem" }],
      shadeFromX: lastFit, xUnit: "tokens"
    });
  }

  function modelSizeChart(t) {
    var top = t.capacity_gb - t.overhead_gb - t.kv_gb_per_1k * t.reserved / 1000;
    var sizes = geomspace(1.0, Math.max(top, 1.5), 100);
    var pts = sizes.map(function (w) { return sweepPoint(t, t.reserved, w); });
    return renderChart({
      id: "fig-model-size",
      title: "Both bounds against the model's weight size at a " + int(t.reserved) + "-token reservation",
      xLabel: "weights W (GB)", yLabel: "tok/s",
      series: [{ name: "memory-power bound", x: sizes, y: pts.map(function (p) { return p.mp; }), css: "mem", unit: "tok/s" },
               { name: "KV-aware at b_mem", x: sizes, y: pts.map(function (p) { return p.kv; }), css: "agg", unit: "tok/s" }],
      xLog: true, yLog: true, xMarks: [{ value: t.weights_gb, label: "W = " + fmtG(t.weights_gb) + " GB", css: "forced" }], xUnit: "GB"
    });
  }

  /* every figure's markup for the toy t, by the id of the svg it replaces */
  function figures(t) {
    return {
      "fig-feasibility": feasibilitySvg(t.capacity_gb, t.bandwidth_gb_per_s),
      "fig-boards": boardsSvg(t, boards(t)),
      "fig-read-context": readContextChart(t),
      "fig-model-size": modelSizeChart(t),
      "fig-containers": reservationChart(t)
    };
  }

  // ---------------------------------------------------------------- the controls
  function check(desc, name, raw) {
    var lim = desc.limits[name], integer = desc.integers.indexOf(name) >= 0;
    var v = Number(raw);
    if (raw === "" || !isFinite(v) || (integer && !Number.isInteger(v)))
      return { error: name + ": must be " + (integer ? "a whole number" : "a number") + ", got " + JSON.stringify(raw) };
    if (!(lim[0] <= v && v <= lim[1])) return { error: name + ": must be between " + fmtG(lim[0]) + " and " + fmtG(lim[1]) + ", got " + fmtG(v) };
    return { value: v };
  }

  /* servebound.web.pages.derivation_toy.toy_query */
  function queryNumber(v) { var s = fmtG(v); return +s === v ? s : pyRepr(v); }
  function query(desc, t) {
    var parts = ["reserved=" + t.reserved, "fraction=" + queryNumber(t.fraction), "weights_gb=" + queryNumber(t.weights_gb)];
    if (t.batch !== null) parts.push("batch=" + t.batch);
    ["overhead_gb", "kv_gb_per_1k", "unread_cap", "capacity_gb", "bandwidth_gb_per_s"].forEach(function (k) {
      if (t[k] !== desc.defaults[k]) parts.push(k + "=" + (desc.integers.indexOf(k) >= 0 ? String(t[k]) : queryNumber(t[k])));
    });
    return parts.join("&");
  }

  function sliderToValue(span, pos) { return span[3] ? Math.round(Math.pow(10, pos)) : pos; }
  function valueToSlider(span, v) { return span[3] ? Math.log10(Math.max(v, 1)) : v; }


  // ---------------------------------------------------------------- the boards in motion
  /* The two boards as the text describes them: through one iteration each board's charged cells light
   * one by one, at the same bandwidth on both sides, the board resets when the iteration completes and
   * its token counter adds the batch; time runs in slow motion (the longer iteration lasts SLOW_MS).
   * The server's SVG (#fig-boards) is left exactly as drawn: the motion is an overlay above it that
   * covers the cells not yet moved in this iteration. Under prefers-reduced-motion nothing moves and no
   * overlay is drawn: the static board, one whole iteration's charged cells lit, is the figure. */
  var SLOW_MS = 2400, SVG_NS = "http://www.w3.org/2000/svg";

  function Animator(figure) {
    var stage = null, overlay = null, clock = null, button = null, frame = null, state = null;
    var reduce = root.matchMedia ? root.matchMedia("(prefers-reduced-motion: reduce)") : null;
    var paused = false;

    function svg() { return document.getElementById("fig-boards"); }
    function ensureStage() {
      var s = svg();
      if (!s) return null;
      if (!stage || !stage.contains(s)) {
        stage = document.createElement("div");
        stage.className = "boards-stage";
        stage.style.position = "relative";
        s.parentNode.insertBefore(stage, s);
        stage.appendChild(s);
        clock = document.createElement("p");
        clock.className = "note boards-clock";
        clock.setAttribute("aria-live", "off");
        button = document.createElement("button");
        button.type = "button";
        button.className = "boards-pause";
        button.addEventListener("click", function () { paused = !paused; if (!paused && state) state.last = null; label(); });
        stage.parentNode.insertBefore(clock, stage.nextSibling);
        clock.parentNode.insertBefore(button, clock.nextSibling);
      }
      return s;
    }
    function label() {
      if (!button) return;
      button.textContent = paused ? "Play the boards" : "Pause the boards";
      button.hidden = !!(reduce && reduce.matches);
      if (stage) stage.setAttribute("data-anim", reduce && reduce.matches ? "off" : paused ? "paused" : "running");
    }
    function stop() {
      if (frame !== null && root.cancelAnimationFrame) root.cancelAnimationFrame(frame);
      frame = null;
      if (overlay && overlay.parentNode) overlay.parentNode.removeChild(overlay);
      overlay = null;
      state = null;
    }
    function place() {
      var s = svg();
      if (!overlay || !s) return;
      var a = s.getBoundingClientRect(), b = stage.getBoundingClientRect();
      overlay.style.left = (a.left - b.left) + "px";
      overlay.style.top = (a.top - b.top) + "px";
      overlay.style.width = a.width + "px";
      overlay.style.height = a.height + "px";
    }
    function el(name, attrs) {
      var n = document.createElementNS(SVG_NS, name);
      Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
      return n;
    }
    /* the charged cells of each board in sweep order (weights first, then each session's reads) */
    function charged(s) {
      var sides = { left: [], right: [] };
      Array.prototype.forEach.call(s.querySelectorAll("rect.cell.lit"), function (r) {
        if (r.parentNode && r.parentNode.tagName.toLowerCase() === "g") return;  // the legend
        sides[+r.getAttribute("x") < 320 ? "left" : "right"].push(r);
      });
      return sides;
    }
    function start(b) {
      stop();
      var s = ensureStage();
      label();
      if (!s || (reduce && reduce.matches)) {
        if (clock) clock.textContent = reduce && reduce.matches
          ? "Reduced motion: the boards stand still, each showing the cells one iteration moves." : "";
        return;
      }
      var cells = charged(s), sides = {}, longest = 0;
      ["left", "right"].forEach(function (side) {
        var rate = side === "left" ? b.left_tok_s : b.right_tok_s;
        var real = rate > 0 && isFinite(rate) ? b.batch / rate : 0;  // seconds per iteration
        sides[side] = { cells: cells[side], real: real, shown: 0, iterations: 0, tokens: 0, covers: [], counter: null };
        longest = Math.max(longest, real);
      });
      if (!(longest > 0)) { clock.textContent = ""; return; }
      var scale = SLOW_MS / (longest * 1000);  // screen ms per machine ms
      overlay = el("svg", { "class": "boards boards-overlay", viewBox: s.getAttribute("viewBox"), "aria-hidden": "true" });
      overlay.style.position = "absolute";
      overlay.style.pointerEvents = "none";
      ["left", "right"].forEach(function (side, k) {
        var d = sides[side];
        d.cells.forEach(function (r) {
          var c = el("rect", { "class": r.getAttribute("class").replace(/\s*\blit\b/, ""), x: r.getAttribute("x"),
            y: r.getAttribute("y"), width: r.getAttribute("width"), height: r.getAttribute("height") });
          overlay.appendChild(c);
          d.covers.push(c);
        });
        d.counter = el("text", { "class": "tick race", x: String(k === 0 ? 310 : 630), y: "282", "text-anchor": "end",
          "data-k": side + "_tokens" });
        d.counter.textContent = "0 tokens";
        overlay.appendChild(d.counter);
      });
      stage.appendChild(overlay);
      place();
      state = { sides: sides, scale: scale, machine: 0, last: null, batch: b.batch };
      frame = root.requestAnimationFrame(tick);
    }
    function tick(now) {
      if (!state) return;
      frame = root.requestAnimationFrame(tick);
      if (paused) return;
      var dt = state.last === null ? 0 : Math.min(now - state.last, 100);  // a hidden tab does not jump
      state.last = now;
      state.machine += dt / state.scale / 1000;  // machine seconds
      ["left", "right"].forEach(function (side) {
        var d = state.sides[side];
        if (!(d.real > 0)) return;
        var done = Math.floor(state.machine / d.real);
        if (done > d.iterations) {  // the iteration completed: the board resets, the counter adds the batch
          d.iterations = done;
          d.tokens = done * state.batch;
          d.counter.textContent = num(d.tokens) + " tokens";
          d.shown = -1;
        }
        var lit = Math.floor(d.covers.length * ((state.machine - done * d.real) / d.real));
        if (lit !== d.shown) {
          for (var i = 0; i < d.covers.length; i++) d.covers[i].style.visibility = i < lit ? "hidden" : "visible";
          d.shown = lit;
        }
      });
      var L = state.sides.left, R = state.sides.right;
      stage.setAttribute("data-left-iterations", String(L.iterations));
      stage.setAttribute("data-right-iterations", String(R.iterations));
      stage.setAttribute("data-left-lit", String(Math.max(L.shown, 0)));
      stage.setAttribute("data-right-lit", String(Math.max(R.shown, 0)));
      clock.textContent = "Slow motion: one second here is " + fmtG(1000 / state.scale, 3) + " ms on the machine; "
        + fixed(state.machine, 3) + " s of machine time so far. Left: " + num(L.iterations) + " iterations; right: "
        + num(R.iterations) + ".";
    }
    if (reduce) {
      var onChange = function () { api.restart(); };
      if (reduce.addEventListener) reduce.addEventListener("change", onChange); else if (reduce.addListener) reduce.addListener(onChange);
    }
    if (root.addEventListener) root.addEventListener("resize", place);
    var current = null;
    var api = { restart: function (b) { current = b || current; if (current) start(current); }, stop: stop };
    return api;
  }

  function init() {
    var form = document.getElementById("toy-controls");
    if (!form || !calc) return;
    var desc = JSON.parse(form.getAttribute("data-toy"));
    var drawn = desc.toy, status = document.createElement("p");
    status.id = "toy-status";
    status.className = "note";
    status.setAttribute("aria-live", "polite");
    var details = form.querySelector("details");
    if (details) details.open = true;
    var button = form.querySelector("button[type=submit]");
    if (button) button.hidden = true;
    form.classList.add("live");
    (details || form).appendChild(status);
    var maximize = form.querySelector('input[name="maximize"]');
    var motion = Animator(form.parentNode);

    desc.controls.forEach(function (c) {
      var box = form.querySelector('input[name="' + c.name + '"]'), span = c.slider;
      if (!box) return;
      var slider = document.createElement("input");
      slider.type = "range";
      slider.className = "toy-slider";
      slider.setAttribute("data-name", c.name);
      slider.setAttribute("aria-label", c.label);
      slider.min = String(span[3] ? Math.log10(span[0]) : span[0]);
      slider.max = String(span[3] ? Math.log10(span[1]) : span[1]);
      slider.step = String(span[2]);
      box.parentNode.insertBefore(slider, box);
      // maximize leaves the batch box empty: the slider starts at the batch drawn, b_mem
      slider.value = String(valueToSlider(span, box.value !== "" ? +box.value : boards(desc.toy).batch));
      slider.addEventListener("input", function () {
        box.value = String(sliderToValue(span, +slider.value));
        if (c.name === "batch" && maximize) maximize.checked = false;
        redraw();
      });
      box.addEventListener("input", function () {
        if (box.value !== "") slider.value = String(valueToSlider(span, +box.value));
        if (c.name === "batch" && maximize && box.value !== "") maximize.checked = false;
        redraw();
      });
    });
    if (maximize) maximize.addEventListener("change", redraw);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); redraw(); });

    function read() {
      var t = {}, errors = [];
      desc.controls.forEach(function (c) {
        var box = form.querySelector('input[name="' + c.name + '"]');
        if (c.name === "batch") return;
        var r = check(desc, c.name, box.value.trim());
        if (r.error) { errors.push(r.error); t[c.name] = desc.toy[c.name]; } else t[c.name] = r.value;
      });
      var batchBox = form.querySelector('input[name="batch"]');
      if (maximize.checked || batchBox.value.trim() === "") t.batch = null;
      else {
        var b = check(desc, "batch", batchBox.value.trim());
        if (b.error) { errors.push(b.error); t.batch = null; } else t.batch = b.value;
      }
      if (!errors.length && t.overhead_gb >= t.capacity_gb)
        errors.push("overhead_gb: must be below capacity_gb (" + fmtG(t.capacity_gb) + "), got " + fmtG(t.overhead_gb) + ": lower the overhead or raise the capacity");
      return { toy: t, errors: errors };
    }

    function draw(t) {
      var svgs = figures(t);
      Object.keys(svgs).forEach(function (id) {
        var old = document.getElementById(id);
        if (old) old.outerHTML = svgs[id];
      });
      drawn = t;
      motion.restart(boards(t));
    }

    function redraw() {
      var r = read();
      if (r.errors.length) { status.textContent = r.errors.join("; "); status.classList.add("error"); return; }
      status.classList.remove("error");
      draw(r.toy);
      status.textContent = "Figures redrawn in your browser (calc.js) for the controls above.";
      document.body.setAttribute("data-toy-drawn", query(desc, r.toy));
      var path = location.pathname.replace(/\.md$/, "");
      history.replaceState(null, "", path + "?" + query(desc, r.toy) + location.hash);
    }

    // A query the server did not draw (the static export ignores it): apply it here.
    var params = new URLSearchParams(location.search), changed = false;
    desc.controls.forEach(function (c) {
      var box = form.querySelector('input[name="' + c.name + '"]');
      if (params.has(c.name) && box && params.get(c.name) !== box.value) { box.value = params.get(c.name); changed = true; }
    });
    var wantMax = ["1", "true", "on"].indexOf(params.get("maximize")) >= 0 || !params.get("batch");
    if (changed && wantMax !== maximize.checked) maximize.checked = wantMax;
    if (changed) {
      desc.controls.forEach(function (c) {
        var box = form.querySelector('input[name="' + c.name + '"]'), slider = form.querySelector('input[data-name="' + c.name + '"]');
        if (box && slider && box.value !== "") slider.value = String(valueToSlider(c.slider, +box.value));
      });
      redraw();
    } else motion.restart(boards(drawn));
    document.body.setAttribute("data-toy-ready", "1");
  }

  var api = { figures: figures, boards: boards, query: query, fixed: fixed, fmtG: fmtG, pyRepr: pyRepr };
  if (typeof module !== "undefined" && module.exports) { module.exports = api; return; }
  root.servebound_derivation = api;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})(typeof self !== "undefined" ? self : this);
