/* servebound's pair-page calculator: sliders, numbers and figures recomputed in the browser.
 *
 * Served site (body data-mode="server"): the numbers come from the JSON API (/api/decode, /api/prefill).
 * Static copy (data-mode="static"): the numbers come from calc.js, the one port of the core's formulas
 * (checked against the core's conformance vectors under Node). Figures are drawn from it in both modes.
 * tests/web/test_browser.py checks that the page's numbers equal the API's. A served page computed for
 * its workload folds its charts and cost section; opening one fetches its fragment (wireFolds below).
 * The charts and their hover readouts are pair_figures.js's. No external asset, no framework: calc.js,
 * chart_axes.js, pair_figures.js and this file are the whole script.
 */
(function () {
  "use strict";

  // ---------------------------------------------------------------- the math: calc.js, the one port
  // calc.js (loaded before this file) holds every formula; tests/web/test_conformance.py checks it
  // against the Python core's conformance vectors under Node. Here only the page's query becomes its input.
  var calc = window.servebound_calc;

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
  // the runtime overhead O where it was left to the engine (api.make_workload, DeclaredWorkload.with_overhead).
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

  // ---------------------------------------------------------------- the figures: pair_figures.js
  // pair_figures.js (loaded before this file) draws the charts for the page's workload, in its formats.
  var figures = window.servebound_pair_figures.forPage({ workloadOf: workloadOf, FMT: FMT, grouped: grouped });
  var drawFigures = figures.drawFigures, attachHover = window.servebound_pair_figures.attachHover;

  // ---------------------------------------------------------------- the page
  function lookup(obj, key) {
    return key.split(".").reduce(function (o, k) { return o === null || o === undefined ? null : o[k]; }, obj);
  }

  function showNumbers(data, d, p, q) {
    var all = { prefill: NOTHING_FITS[d.verdict] ? noWait(p) : p, floor_tok_s: q.floor };
    for (var k in d) if (d.hasOwnProperty(k)) all[k] = d[k];
    all.verdict_text = data.verdicts[d.verdict];
    all.fits_text = d.verdict === "floor_fit" || d.verdict === "no_floor" ? "Yes: " + FMT.int(d.batch_mem) + (d.batch_mem === 1 ? " session fits" : " sessions fit") : data.verdicts[d.verdict];
    all.overhead_bytes = q.overhead_gb * 1e9;  // the O this workload was computed with
    all.capacity_bytes = data.hardware.memory_bytes;
    var why = NOTHING_FITS[d.verdict] ? "nothing fits in memory" : "no batch holds the floor";
    var sessions = d.forced ? d.forced.batch : (d.batch_star || d.batch_mem || 0);
    all.memory_sessions_text = FMT.int(sessions) + (sessions === 1 ? " session" : " sessions");
    document.querySelectorAll("#results [data-k]").forEach(function (node) {
      var v = lookup(all, node.getAttribute("data-k"));
      var f = node.getAttribute("data-f");
      if ((v === null || v === undefined) && node.hasAttribute("data-why")) { node.textContent = "none: " + why; return; }
      node.textContent = f ? FMT[f](v) : (v === null || v === undefined ? "n/a" : String(v));
    });
    // A sentence that holds only for some workloads ("!key": only where key is empty) shows where it holds.
    document.querySelectorAll("#results [data-if]").forEach(function (node) {
      var key = node.getAttribute("data-if"), not = key.charAt(0) === "!";
      var v = lookup(all, not ? key.slice(1) : key), has = v !== null && v !== undefined && v !== false && v !== 0;
      node.hidden = not ? has : !has;
    });
    var verdict = document.querySelector("#results .verdict");
    if (verdict) verdict.className = "verdict v " + d.verdict;
    var block = document.getElementById("offload-answer");
    if (block) block.hidden = !d.offload;
  }

  // The served site's answer regions for a new workload replace the page's own, whole.
  function swapRegions(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    t.content.querySelectorAll("[data-region]").forEach(function (fresh) {
      var old = document.querySelector('#results [data-region="' + fresh.getAttribute("data-region") + '"]');
      if (old) old.parentNode.replaceChild(fresh, old);
    });
    document.querySelectorAll("#results svg.chart").forEach(attachHover);
    wireFolds();
  }

  // The words of an error page (the server names the field and the fix).
  function errorText(body, fallback) {
    var t = document.createElement("template");
    t.innerHTML = body;
    var main = t.content.querySelector("p.error");
    return main ? main.textContent.trim() : fallback;
  }

  // On the static copy the server's sentences (notes, remedies, cost, worked formulas) hold only for the
  // workload the page was built with: once the browser recomputes, they are hidden and a line says so.
  function showServerOnly(show) {
    document.querySelectorAll("#results [data-server]").forEach(function (node) { node.hidden = !show; });
    var line = document.getElementById("static-note");
    if (line) line.hidden = show;
  }

  // Static copy with weights in host RAM: no number is computed here; the page says where they come from.
  function showOffloadUncomputed(offload) {
    document.querySelectorAll("#results [data-k]").forEach(function (node) {
      if (node.closest("#format-support")) return;
      node.textContent = "n/a";
    });
    var block = document.getElementById("offload-answer"), note = document.getElementById("offload-static");
    if (block) block.hidden = !offload;
    if (note) note.hidden = !offload;
    var verdict = document.querySelector("#results .verdict");
    if (verdict) { verdict.className = "verdict v"; verdict.textContent = "Weights in host RAM, another KV precision and a system's parallel layout are computed by the server (servebound serve), not by this static copy."; }
    showServerOnly(false);
  }

  // The workload inputs come from pair-data's "inputs" (servebound.web.app.query.page_inputs, from the one
  // declaration): each field's kind and default, and the names the page, /api/decode and /api/prefill take.
  var DEFAULTS = {};  // each field's declared default: the URL carries only what differs from it
  function readForm(form, data) {
    var fd = new FormData(form), q = {};
    data.inputs.fields.forEach(function (f) {
      DEFAULTS[f.name] = f.default;
      var raw = fd.get(f.name);
      if (f.kind === "bool") { q[f.name] = raw !== null && raw !== ""; return; }
      raw = raw === null ? "" : String(raw).trim();
      if (raw === "") q[f.name] = f.default;
      // a number in the one grammar (32k, 32,000: servebound.inputs.workload.Input.parse), else the text
      else q[f.name] = f.kind === "int" || f.kind === "float" ? calc.parseNumber(raw, f.kind, f.tokens) : raw;
    });
    if (fd.get("maximize")) q.batch = null;
    // O left to the default (the row's, or the engine's convention) until its slider is moved.
    var slider = form.querySelector("[name=overhead_gb]");
    q.overhead_given = !slider || slider.dataset.given === "1";
    if (!q.overhead_given) q.overhead_gb = defaultOverheadGb(data, q);
    if (q.read_context > q.alloc_context) q.read_context = q.alloc_context;
    ["read_context", "prompt"].forEach(function (name) {  // their sliders stop at the reservation
      var input = form.querySelector("[name=" + name + "]");
      if (!input || input.type !== "range" || !q.alloc_context) return;
      input.max = q.alloc_context;  // the browser pulls a value above it down: the output follows
      if (Number(input.value) > q.alloc_context) input.value = q.alloc_context;
      var out = input.parentNode.querySelector("output");
      if (out) out.textContent = Number(input.value).toLocaleString("en-US");
    });
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
      return v !== null && v !== undefined && v !== false && v !== "" && !(spec[n] && !q.draft) && v !== DEFAULTS[n] &&
        !(n === "overhead_gb" && !q.overhead_given);
    }).map(function (n) { return n + "=" + encodeURIComponent(q[n]); }).join("&");
  }

  function fetchJSON(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (r) {
      return r.json().then(function (body) { if (!r.ok) throw new Error(body.error ? body.error.field + ": " + body.error.message : r.statusText); return body; });
    });
  }

  // A computed page's folded sections (pair_records.SECTIONS on the server): each is filled from its
  // fragment, the server's HTML of that section for the page's workload, the first time it is opened.
  function wireFolds() {
    document.querySelectorAll("details.fold[data-fragment]").forEach(function (details) {
      if (details.dataset.wired) return;
      details.dataset.wired = "1";
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
    // The served site answers every workload from the server; the static copy computes here, except
    // weights in host RAM (two memory tiers), which it names as the server's.
    // A system answers at a parallel layout (pair-data's "layout"), which only the server computes.
    var twoTier = offloadAsked(q) || offloadAsked(data.query) || !!q.kv_precision || !!data.layout;
    var browser = !twoTier && document.body.dataset.mode !== "server";
    var local = browser ? decode(data.hardware, data.model, q) : null;
    var localPre = browser ? prefill(data.hardware, data.model, q) : null;
    var note = document.getElementById("calc-status");
    var pageUrl = location.pathname.replace(/\.md$/, "") + "?" + (data.calculator ?
      "hardware=" + encodeURIComponent(data.hardware.id) + "&model=" + encodeURIComponent(data.model.id) + "&" : "") +
      queryString(q, data.inputs.page) +
      (data.model.native === false && document.body.dataset.mode === "static" && !data.calculator ? "&profile=" + encodeURIComponent(data.model.id) : "");
    var slider = form.querySelector("[name=overhead_gb]");
    function showOverhead(gb) {
      if (!slider || q.overhead_given || gb === null || gb === undefined) return;
      if (Number(slider.max) < gb) slider.max = Math.ceil(gb);
      slider.value = gb;
      var out = slider.parentNode.querySelector("output");
      if (out) out.textContent = (+gb.toPrecision(6)).toLocaleString("en-US");
    }
    if (document.body.dataset.mode === "server") {
      document.body.setAttribute("data-computed", "pending");
      // The server renders the page's answer regions for the new workload (?section=answer): they
      // replace the old ones whole, so nothing on the page outlives the workload it belongs to.
      var url = pageUrl + (/\?$/.test(pageUrl) ? "" : "&") + "section=answer";
      clearTimeout(recompute.timer);
      recompute.timer = setTimeout(function () {
        fetch(url, { headers: { Accept: "text/html" } }).then(function (r) {
          return r.text().then(function (body) {
            if (!r.ok) throw new Error(errorText(body, r.statusText));
            return body;
          });
        }).then(function (html) {
          if (ticket !== pending) return;
          swapRegions(html);
          var verdict = document.querySelector("#results .verdict");
          showOverhead(verdict ? Number(verdict.getAttribute("data-overhead-gb")) : null);
          if (note) note.textContent = "Answer from the server for this workload.";
          document.body.setAttribute("data-computed", "api");
        }).catch(function (err) {
          if (ticket !== pending) return;
          if (note) note.textContent = String(err.message || err);
          document.body.setAttribute("data-computed", "error");
        });
      }, 120);
    } else if (twoTier) {
      showOffloadUncomputed(offloadAsked(q));
      if (note) note.textContent = "Weights in host RAM, another KV precision or a system's layout: not computed in this static copy (the served site and the CLI compute them).";
      document.body.setAttribute("data-computed", "none");
    } else {
      showNumbers(data, local, localPre, q);
      showServerOnly(false);
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
    // A name as people type it (llama3.3:70b, 4090): the copy's names table (pickers.js) gives the ids.
    var names = window.servebound_pickers;
    if (names) {
      Promise.all([names.resolve(H, "hardware"), names.resolve(M, "model")]).then(function (found) {
        if (found[0] && found[1] && (found[0].id !== H || found[1].id !== M)) {
          sp.set("hardware", found[0].id);
          sp.set("model", found[1].id);
          location.replace(location.pathname + "?" + sp.toString());
        } else {
          calculatorFor(H, M, pick, fallback);
        }
      }).catch(function () { calculatorFor(H, M, pick, fallback); });
      return;
    }
    calculatorFor(H, M, pick, fallback);
  }

  function calculatorFor(H, M, pick, fallback) {
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
      var names = window.servebound_pickers;  // the picker shows the pair's names, keeps its ids
      if (pick && names) { names.hold(pick.elements.hardware, H, hw.name); names.hold(pick.elements.model, M, model.name); }
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
