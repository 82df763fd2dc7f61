/* servebound's calculator in the browser: pure functions, no DOM.
 *
 * A port of the Python core (servebound.core: kv, experts, decode, decode_range, prefill), kept equal to
 * it by conformance vectors the core generates (/conformance.json; tests/web/test_conformance.py runs
 * every vector through this file under Node and requires 1e-9 relative agreement). site.js draws the
 * pages from it; Node loads it with require(). The charts' axes are chart_axes.js's.
 *
 * Inputs use the core's units: bytes, bytes/s, FLOP/s, tokens. A model is
 *   {always_on_bytes, expert_bytes, routed, per_token, resident_bytes,
 *    kv_alloc: {global, local, window, state}, kv_read: {...}, context_limit,
 *    prefill: {linear_active_params, global, local, window, state, kv_write, linear_mode,
 *              linear_mode_if_published, attention_mode, linear_split: [[mode, params], ...]}}
 * and a workload {overhead_bytes, alloc_context, read_context, floor, batch, expert_traffic,
 *   speculation: {draft: model, draft_tokens, tokens_per_step} | null}.
 */
(function (root) {
  "use strict";

  var MAX_BATCH = 1000000000;       // servebound.core.workload.MAX_BATCH
  var CONTEXT_CAP = 9007199254740992; // 2^53, servebound.core.kv.CONTEXT_CAP

  // ------------------------------------------------------------------ caches: K(L) and its inverse
  function kvBytes(s, L) {
    return s.global * L + s.local * Math.min(L, s.window) + s.state;
  }

  function grows(s) {
    return s.global > 0 || (s.local > 0 && s.window > 0);
  }

  function floorCapped(ratio) {
    return !(ratio < CONTEXT_CAP) ? CONTEXT_CAP : Math.floor(ratio);
  }

  function kvInverse(s, budget) {
    if (budget < s.state) return -1;
    var room = budget - s.state, steep = s.global + s.local;
    if (s.window > 0 && steep > 0) {
      var atWindow = steep * s.window;
      if (room < atWindow) return floorCapped(room / steep);
      room -= atWindow;
      if (s.global <= 0) return null;
      return s.window + floorCapped(room / s.global);
    }
    if (s.global <= 0) return null;
    return floorCapped(room / s.global);
  }

  /* KVShape.max_context_within: the largest integer L >= 0 with K(L) <= budget; -1 when K(0) exceeds
   * it; null when K never does. The closed form is settled against K itself; when rounding moved it
   * far, a bisection on [0, 2^53] with K decides. */
  function maxContextWithin(s, budget) {
    var guess = kvInverse(s, budget);
    if (guess === null || guess < 0) return guess;
    guess = Math.min(guess, CONTEXT_CAP);
    var settled = false;
    for (var i = 0; i < 4; i++) {
      if (guess > 0 && kvBytes(s, guess) > budget) guess -= 1;
      else if (guess < CONTEXT_CAP && kvBytes(s, guess + 1) <= budget) guess += 1;
      else { settled = true; break; }
    }
    if (!settled) {
      if (kvBytes(s, CONTEXT_CAP) <= budget) return null;
      var lo = 0, hi = CONTEXT_CAP;
      while (hi - lo > 1) {
        var mid = Math.floor((lo + hi) / 2);
        if (kvBytes(s, mid) <= budget) lo = mid; else hi = mid;
      }
      return lo;
    }
    return guess >= CONTEXT_CAP ? null : guess;
  }

  // ------------------------------------------------------------------ weights
  function distinct(n, E, k, traffic) {
    if (traffic === "minimum") return k;
    if (k >= E) return E;
    return -E * Math.expm1(n * Math.log1p(-k / E));
  }

  function wBatch(m, n, traffic) {
    if (!m.routed) return m.always_on_bytes;
    return m.always_on_bytes + m.expert_bytes * distinct(n, m.routed, m.per_token, traffic);
  }

  function wActive(m) {
    return m.always_on_bytes + (m.routed ? m.per_token : 0) * m.expert_bytes;
  }

  function memoryFitBatch(margin, kvAlloc) {
    if (margin < 0) return [0, false];
    if (kvAlloc <= 0) return [MAX_BATCH, true];
    var ratio = margin / kvAlloc;
    if (ratio > MAX_BATCH) return [MAX_BATCH, true];
    return [Math.floor(ratio), false];
  }

  // ------------------------------------------------------------------ decode's compute roof
  /* The linear math's mode on this row (servebound.core.rates.linear_mode_for): a given mode, else the
     model's engine mode where the row publishes it (llama.cpp's F16 files: fp16_acc16), else linear_mode */
  function linearModeFor(hw, p, linearMode) {
    if (linearMode) return linearMode;
    var F = hw.compute_flop_per_s || {}, pref = p.linear_mode_if_published;
    return pref && Object.prototype.hasOwnProperty.call(F, pref) ? pref : p.linear_mode;
  }

  /* F_hw lookups for the modes a prefill adapter selects (servebound.core.rates.mode_rates) */
  /* F_hw(mode), or the rate charged in its place (servebound.core.rates.charge_mode, sent as
   * hw.charged_modes: mode -> [charged mode, rate]); null where the row publishes no rate at all */
  function chargedRate(hw, mode) {
    var F = hw.compute_flop_per_s || {}, C = hw.charged_modes || {};
    if (Object.prototype.hasOwnProperty.call(F, mode)) return F[mode];
    return Object.prototype.hasOwnProperty.call(C, mode) ? C[mode][1] : null;
  }

  /* F_linear: the mode's rate, or where the weights mix modes (servebound.core.rates._split_rates) each
     part at its own mode's rate, P / sum(P_i / F_i), the part in linear_mode at the engine's mode for it
     (linearModeFor); null when a part has no rate */
  function linearRate(hw, p, linearMode) {
    var split = p.linear_split || [];
    var engine = linearModeFor(hw, p, linearMode);
    if (linearMode || !split.length) return chargedRate(hw, engine);
    var inverse = 0.0, total = 0.0;
    for (var i = 0; i < split.length; i++) {
      var rate = chargedRate(hw, split[i][0] === p.linear_mode ? engine : split[i][0]);
      if (rate === null) return null;
      inverse += split[i][1] / rate;
    }
    for (var j = 0; j < split.length; j++) total += split[j][1];
    return inverse > 0 ? total / inverse : null;
  }

  function modeRates(hw, p, linearMode, attentionMode) {
    var F = hw.compute_flop_per_s || {};
    var has = function (k) { return Object.prototype.hasOwnProperty.call(F, k); };
    var lm = linearModeFor(hw, p, linearMode), am = attentionMode || p.attention_mode;
    var linear = linearRate(hw, p, linearMode), attention = chargedRate(hw, am);
    var needsLinear = p.linear_active_params > 0;
    var needsAttention = p.global > 0 || (p.local > 0 && p.window > 0) || p.state > 0;
    var missing = [];
    if (needsLinear && !has(lm)) missing.push(lm);
    if (needsLinear && !linearMode) {
      (p.linear_split || []).forEach(function (part) {
        if (!has(part[0]) && missing.indexOf(part[0]) < 0) missing.push(part[0]);
      });
    }
    if (needsAttention && !has(am) && missing.indexOf(am) < 0) missing.push(am);
    var available = !((needsLinear && linear === null) || (needsAttention && attention === null));
    return { linear: linear, attention: attention, missing: missing, available: available };
  }

  /* one session's `tokens` new tokens after `prefix`: [linear FLOPs, attention FLOPs, seconds | null] */
  function scalarStep(p, r, tokens, prefix) {
    var linear = 2.0 * p.linear_active_params * tokens;
    var attention = tokens * attentionPerToken(p, tokens, prefix);
    if (!r.available) return [linear, attention, null];
    return [linear, attention, (r.linear ? linear / r.linear : 0.0) + (r.attention ? attention / r.attention : 0.0)];
  }

  /* servebound.core.decode_compute.decode_compute: c, the compute seconds per session per step at
   * L_read (n = 1, or gamma + 1 with a draft, whose gamma one-token steps join when it can be charged) */
  function decodeCompute(hw, m, w) {
    var spec = w.speculation || null, n = spec ? spec.draft_tokens + 1 : 1;
    var rho = spec ? spec.tokens_per_step : 1.0, L = w.read_context, p = m.prefill;
    if (!p) return { status: "no_prefill_fields", seconds: null, flops: null, rho: rho };
    var step = scalarStep(p, modeRates(hw, p), n, L), seconds = step[2], draftFlops = 0.0;
    if (spec && spec.draft_tokens > 0 && spec.draft.prefill) {
      var dp = spec.draft.prefill, ds = scalarStep(dp, modeRates(hw, dp), 1, L);
      if (ds[2] !== null) {
        draftFlops = spec.draft_tokens * (ds[0] + ds[1]);
        if (seconds !== null) seconds += spec.draft_tokens * ds[2];
      }
    }
    var status = w.memory_only ? "memory_only" : (seconds === null ? "missing_rate" : "charged");
    if (w.memory_only) seconds = null;
    return { status: status, seconds: seconds, flops: step[0] + step[1] + draftFlops, rho: rho };
  }

  // ------------------------------------------------------------------ decode
  /* q(b) (the memory line) and q_eff(b) = max(q(b), R c / rho) (the step's time per emitted token) */
  function traffic(m, w, readContext, computeBytes) {
    var kvRead = kvBytes(m.kv_read, readContext), spec = w.speculation || null, mode = w.expert_traffic;
    var draftRead = spec ? kvBytes(spec.draft.kv_read, readContext) : 0;
    var cb = computeBytes || 0.0;
    function perToken(b) {
      if (!spec) return wBatch(m, b, mode) / b + kvRead;
      var g = spec.draft_tokens, rho = spec.tokens_per_step;
      var shared = wBatch(m, b * (g + 1), mode) + g * wBatch(spec.draft, b, mode);
      return shared / (b * rho) + (kvRead + g * draftRead) / rho;
    }
    function effective(b) { var q = perToken(b); return cb <= 0.0 ? q : Math.max(q, cb); }
    function catchesUp(b) { return cb > 0.0 && perToken(b) <= cb; }
    return { kvRead: kvRead, perToken: perToken, effective: effective, catchesUp: catchesUp, computeBytes: cb };
  }

  function computeBytesOf(hw, m, w) {
    var c = decodeCompute(hw, m, w);
    return c.status === "charged" && c.seconds !== null ? hw.bandwidth_bytes_per_s * c.seconds / c.rho : 0.0;
  }

  function balanceBatch(t, bmem) {
    if (bmem < 1 || !t.catchesUp(bmem)) return null;
    if (t.catchesUp(1)) return 1;
    var lo = 1, hi = bmem;
    while (hi - lo > 1) { var mid = Math.floor((lo + hi) / 2); if (t.catchesUp(mid)) hi = mid; else lo = mid; }
    return hi;
  }

  function largestTrue(ok, lo, hi) {
    while (lo < hi) {
      var mid = Math.floor((lo + hi + 1) / 2);
      if (ok(mid)) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  /* the context a session's cache holds (servebound.core.workload.Workload.held_context_tokens):
   * L_alloc reserved, L_read paged */
  function held(w) {
    return w.kv_allocation === "paged" ? w.read_context : w.alloc_context;
  }

  /* servebound.core.decode.decode: the gates, b_mem, b_rate, the exact floor test, b*, the ceilings. */
  function decode(hw, m, w) {
    var C = hw.memory_bytes, R = hw.bandwidth_bytes_per_s, floor = w.floor, spec = w.speculation || null;
    var resident = m.resident_bytes + (spec ? spec.draft.resident_bytes : 0);
    var margin = C - resident - w.overhead_bytes;
    var kvAlloc = kvBytes(m.kv_alloc, held(w)) + (spec ? kvBytes(spec.draft.kv_alloc, held(w)) : 0);
    var comp = decodeCompute(hw, m, w);
    var t = traffic(m, w, w.read_context, comp.status === "charged" && comp.seconds !== null ? R * comp.seconds / comp.rho : 0.0);
    var active = wActive(m), rho = comp.rho;
    var out = {
      verdict: null, resident_bytes: resident, resident_margin_bytes: margin, kv_alloc_bytes: kvAlloc,
      kv_read_bytes: t.kvRead, weight_active_bytes: active, batch_mem: null, batch_mem_capped: false,
      batch_rate: null, batch_floor: null, batch_star: null, batch_limited_by: null,
      single_session_tok_s: null, aggregate_tok_s: null, per_session_tok_s: null,
      bytes_per_token_at_star: null, memory_power_tok_s: null, large_memory_limit_tok_s: null,
      forced: null, remedies: {}, balance_batch: null, bound_by: null, step_time_s: null,
      compute_tok_s_at_star: null, memory_tok_s_at_star: null,
      decode_flops_per_token: comp.flops === null ? null : comp.flops / rho
    };
    function forced(bmem) {
      if (w.batch === null || w.batch === undefined) return null;
      var agg = R / t.effective(w.batch), per = agg / w.batch;
      return { batch: w.batch, aggregate_tok_s: agg, per_session_tok_s: per, clears_floor: per >= floor,
               fits_memory: w.batch <= bmem };
    }
    if (margin < 0) {
      out.verdict = "no_resident_fit";
      out.forced = forced(0);
      out.remedies = { capacity_needed_bytes: resident + w.overhead_bytes + kvAlloc,
                       max_overhead_bytes: C - resident - kvAlloc };
      return out;
    }
    var fit = memoryFitBatch(margin, kvAlloc), bmem = fit[0];
    out.batch_mem = bmem;
    out.batch_mem_capped = fit[1];
    if (bmem === 0) {
      out.verdict = "no_session_fit";
      out.forced = forced(0);
      var target = kvBytes(m.kv_alloc, held(w));
      var found = maxContextWithin(m.kv_alloc, margin - (kvAlloc - target));
      out.remedies = { capacity_needed_bytes: resident + w.overhead_bytes + kvAlloc,
                       max_overhead_bytes: C - resident - kvAlloc,
                       max_alloc_context_tokens: found === null ? null : Math.max(found, 0) };
      return out;
    }
    var single = R / t.effective(1);
    out.single_session_tok_s = single;
    var balance = balanceBatch(t, bmem);
    out.balance_batch = balance;
    if (kvAlloc > 0 && active > 0) {
      out.large_memory_limit_tok_s = C * R / (kvAlloc * active);
      out.memory_power_tok_s = R * margin / (kvAlloc * active);
    }
    var brate = null;
    if (!spec && t.kvRead > 0 && floor > 0) {
      var closed = (R / floor - active) / t.kvRead;
      brate = closed <= MAX_BATCH ? Math.max(0, Math.floor(closed)) : null;
    }
    out.batch_rate = brate;
    out.forced = forced(bmem);
    function clears(b) { return R / (b * t.effective(b)) >= floor; }
    if (!clears(1)) {
      out.verdict = "no_floor";
      var maxRead = null;
      if (!spec) {
        var budget = (floor > 0 ? R / floor : Infinity) - wBatch(m, 1, w.expert_traffic);
        var f = maxContextWithin(m.kv_read, budget);
        maxRead = f !== null && f >= 0 ? f : null;
      }
      out.remedies = { batch1_tok_per_s: single, max_read_context_tokens: maxRead,
                       bandwidth_needed_bytes_per_s: floor * t.perToken(1) };
      return out;
    }
    var upper = brate === null ? bmem : Math.max(1, Math.min(bmem, brate));
    var usable = clears(upper) ? upper : largestTrue(clears, 1, upper);
    var by = usable < bmem ? "floor" : (fit[1] ? "search_cap" : "memory");
    var star = usable;
    // past the balance batch the aggregate is flat at rho / c: b* is the smallest batch reaching it
    if (t.perToken(usable) < t.computeBytes && balance !== null && balance < usable) { star = balance; by = "compute"; }
    var qStar = t.perToken(star);
    out.verdict = "floor_fit";
    out.batch_star = star;
    out.batch_floor = usable < bmem ? usable : null;
    out.batch_limited_by = by;
    out.aggregate_tok_s = R / t.effective(star);
    out.per_session_tok_s = out.aggregate_tok_s / star;
    out.bytes_per_token_at_star = qStar;
    var tMem = star * rho * qStar / R;
    var tCmp = comp.status === "charged" && comp.seconds !== null ? star * comp.seconds : null;
    out.bound_by = tCmp !== null && tCmp > tMem ? "compute" : "memory";
    out.step_time_s = tCmp === null ? tMem : Math.max(tMem, tCmp);
    out.compute_tok_s_at_star = tCmp === null ? null : star * rho / tCmp;
    out.memory_tok_s_at_star = R / qStar;
    return out;
  }

  /* T(b) and r(b) over batches (servebound.core.decode.curve). */
  function decodeCurve(hw, m, w, batches) {
    var R = hw.bandwidth_bytes_per_s, t = traffic(m, w, w.read_context, computeBytesOf(hw, m, w));
    return batches.map(function (b) { var agg = R / t.effective(b); return [agg, agg / b]; });
  }

  // ------------------------------------------------------------------ decode against read context
  function atContext(w, L) {
    var out = {};
    for (var k in w) if (Object.prototype.hasOwnProperty.call(w, k)) out[k] = w[k];
    out.read_context = L;
    out.alloc_context = Math.max(w.alloc_context, L);
    out.batch = null;
    return out;
  }

  /* servebound.core.decode_range.decode_context_range: every read context 0..the model's limit, each
   * reserving max(L_alloc, L); extremes by monotonicity, the floor's edge by bisection. */
  function contextRange(hw, m, w) {
    var base = decode(hw, m, atContext(w, 0));
    var out = { verdict: base.verdict, max_read_context_tokens: null, limited_by: null,
                floor_read_context_tokens: null, single_session: null, aggregate: null };
    if (base.verdict !== "floor_fit" && base.verdict !== "no_floor") return out;
    var top, by;
    if (m.context_limit !== null && m.context_limit !== undefined) { top = m.context_limit; by = "context_limit"; }
    else { top = w.alloc_context; by = "alloc_context"; }
    var spec = w.speculation || null, margin = base.resident_margin_bytes;
    function sessionFits(L) {
      var a = w.kv_allocation === "paged" ? L : Math.max(w.alloc_context, L);
      var kv = kvBytes(m.kv_alloc, a) + (spec ? kvBytes(spec.draft.kv_alloc, a) : 0);
      return memoryFitBatch(margin, kv)[0] >= 1;
    }
    if (!sessionFits(top)) { top = largestTrue(sessionFits, Math.min(w.alloc_context, top), top); by = "memory"; }
    var R = hw.bandwidth_bytes_per_s;
    function batch1Clears(L) {
      var at = atContext(w, L);
      return R / traffic(m, at, L, computeBytesOf(hw, m, at)).effective(1) >= w.floor;
    }
    var edge = null;
    if (base.verdict === "floor_fit") edge = batch1Clears(top) ? top : largestTrue(batch1Clears, 0, top);
    var longest = decode(hw, m, atContext(w, top));
    out.max_read_context_tokens = top;
    out.limited_by = by;
    out.floor_read_context_tokens = edge;
    out.single_session = { hi_tok_s: base.single_session_tok_s, hi_read_context_tokens: 0,
                           lo_tok_s: longest.single_session_tok_s, lo_read_context_tokens: top };
    if (edge !== null) {
      var e = decode(hw, m, atContext(w, edge));
      out.aggregate = { hi_tok_s: base.aggregate_tok_s, hi_read_context_tokens: 0, hi_batch_star: base.batch_star,
                        lo_tok_s: e.aggregate_tok_s, lo_read_context_tokens: edge, lo_batch_star: e.batch_star };
    }
    return out;
  }

  /* single-session ceiling, b* and the aggregate at b* at each read context (for figures) */
  function contextCurve(hw, m, w, contexts) {
    return contexts.map(function (L) {
      var d = decode(hw, m, atContext(w, L));
      return { read_context_tokens: L, single_session_tok_s: d.single_session_tok_s, batch_star: d.batch_star,
               aggregate_tok_s: d.aggregate_tok_s, per_session_tok_s: d.per_session_tok_s };
    });
  }

  // ------------------------------------------------------------------ prefill
  function rates(hw, p, linearMode, attentionMode) {
    attentionMode = attentionMode || p.attention_mode;
    var linear = linearRate(hw, p, linearMode);
    var attention = chargedRate(hw, attentionMode);
    var needsAttention = p.global > 0 || (p.local > 0 && p.window > 0) || p.state > 0;
    var needsLinear = p.linear_active_params > 0;
    var available = !((needsLinear && linear === null) || (needsAttention && attention === null));
    return { R: hw.bandwidth_bytes_per_s, linear: linear, attention: attention, available: available };
  }

  /* a_attn(c, l) (servebound.core.prefill.attention_flops_per_token) */
  function attentionPerToken(p, c, prefix) {
    var inside = Math.min(Math.max(p.window - prefix, 0), c);
    var localSum = inside * prefix + inside * (inside + 1) / 2 + (c - inside) * p.window;
    return p.global * (prefix + (c + 1) / 2) + p.local * localSum / c + p.state;
  }

  /* sum_{i=1..n-1} K_read(i c), one session's prefix rereads over n chunks of width c */
  function summedReread(s, c, chunks) {
    var k = Math.max(chunks - 1, 0);
    var inside = s.window > 0 ? Math.min(k, Math.floor(s.window / c)) : 0;
    return s.global * c * k * (k + 1) / 2 + s.local * (c * inside * (inside + 1) / 2 + s.window * (k - inside)) +
      s.state * k;
  }

  /* _evaluate for one setting (b, L, c); c null means one shot */
  function evaluate(m, r, mode, b, L, c) {
    var p = m.prefill, tokens = b * L, chunk, chunks, sweep, reread;
    if (c === null || c === undefined) {
      chunk = L; chunks = 1; sweep = wBatch(m, tokens, mode); reread = 0;
    } else {
      chunk = Math.min(c, L);
      var full = Math.floor(L / chunk), last = L - full * chunk;
      chunks = full + (last > 0 ? 1 : 0);
      sweep = full * wBatch(m, b * chunk, mode) + (last > 0 ? wBatch(m, b * last, mode) : 0);
      reread = b * summedReread(m.kv_read, chunk, chunks);
    }
    var write = tokens * p.kv_write;
    var linearFlops = 2 * tokens * p.linear_active_params;
    var attentionFlops = tokens * attentionPerToken(p, L, 0);
    var memoryTime = (sweep + reread + write) / r.R;
    var computeTime = null;
    if (r.available) {
      computeTime = (r.linear !== null ? linearFlops / r.linear : 0) + (r.attention !== null ? attentionFlops / r.attention : 0);
    }
    var time = computeTime === null ? memoryTime : Math.max(memoryTime, computeTime);
    return { batch: b, prompt: L, chunk: chunk, chunks: chunks, tokens: tokens, sweep: sweep, reread: reread,
             write: write, linear_flops: linearFlops, attention_flops: attentionFlops,
             memory_time: memoryTime, compute_time: computeTime, time: time };
  }

  /* S* (servebound.core.prefill.crossover_tokens) */
  function crossover(m, r, mode) {
    var p = m.prefill;
    if (p.linear_active_params <= 0 || r.linear === null) return null;
    var k = r.linear / (2.0 * p.linear_active_params * r.R);
    if (!m.routed || mode === "minimum") return k * wBatch(m, 1.0, mode);
    var saturated = m.always_on_bytes + m.routed * m.expert_bytes;
    var lo = 0.0, hi = k * saturated;
    for (var i = 0; i < 200; i++) {
      var mid = (lo + hi) / 2.0;
      if (mid - k * wBatch(m, mid, mode) < 0.0) lo = mid; else hi = mid;
      if (hi - lo <= 1e-12 * hi) break;
    }
    return hi;
  }

  /* S* with attention (servebound.core.prefill_cost.crossover_with_attention): the one-shot prompt
   * length where memory time equals compute time at batch b, by bisection on [1, longest] */
  function crossoverWithAttention(m, r, mode, b, longest) {
    if (!r.available) return null;
    var p = m.prefill;
    function gap(L) {
      var tokens = b * L;
      var memory = (wBatch(m, tokens, mode) + tokens * p.kv_write) / r.R;
      var linear = 2.0 * tokens * p.linear_active_params, attention = tokens * attentionPerToken(p, L, 0);
      return (r.linear ? linear / r.linear : 0.0) + (r.attention ? attention / r.attention : 0.0) - memory;
    }
    var lo = 1.0, hi = Math.max(longest, 1);
    if (gap(lo) >= 0.0 || gap(hi) <= 0.0) return null;
    for (var i = 0; i < 200; i++) {
      var mid = (lo + hi) / 2.0;
      if (gap(mid) > 0.0) hi = mid; else lo = mid;
      if (hi - lo <= 1e-9 * hi) break;
    }
    return hi;
  }

  /* servebound.core.prefill.prefill: q = {prompt, batch: int|"max", chunk|null, ttft_budget|null,
   * linear_mode, attention_mode}. Inputs are assumed valid (the core's checks run at the page's edge). */
  function prefill(hw, m, w, q) {
    if (!m.prefill) return null;
    var prompt = q.prompt, chunk = q.chunk === null || q.chunk === undefined ? prompt : Math.min(q.chunk, prompt);
    var budget = q.ttft_budget === undefined ? null : q.ttft_budget;
    var searching = q.batch === "max", given = searching ? 1 : (q.batch || 1);
    var r = rates(hw, m.prefill, q.linear_mode, q.attention_mode), mode = w.expert_traffic;
    var margin = hw.memory_bytes - m.resident_bytes - w.overhead_bytes;
    var kvAlloc = kvBytes(m.kv_alloc, w.kv_allocation === "paged" ? prompt : w.alloc_context);
    var fit = memoryFitBatch(margin, kvAlloc), bmem = fit[0];
    function ev(b) { return evaluate(m, r, mode, b, prompt, chunk); }
    function within(b) { return budget === null || ev(b).time <= budget; }
    var verdict, chosen;
    if (margin < 0) { verdict = "no_resident_fit"; chosen = given; }
    else if (bmem === 0) { verdict = "no_session_fit"; chosen = given; }
    else if (searching) {
      if (!within(1)) { verdict = "over_budget"; chosen = 1; }
      else { verdict = "fits"; chosen = within(bmem) ? bmem : largestTrue(within, 1, bmem); }
    } else if (given > bmem) { verdict = "no_batch_fit"; chosen = given; }
    else { verdict = within(given) ? "fits" : "over_budget"; chosen = given; }
    var e = ev(chosen), traffic = e.sweep + e.reread + e.write;
    return {
      verdict: verdict, prompt_tokens: prompt, batch: chosen, chunk: e.chunk, chunks: e.chunks,
      chunk_mode: e.chunk === prompt ? "one_shot" : "policy", batch_mode: searching ? "max" : "given",
      batch_mem: bmem, batch_mem_capped: fit[1], resident_margin_bytes: margin, kv_alloc_bytes: kvAlloc,
      memory_tok_s: e.tokens / e.memory_time,
      compute_tok_s: e.compute_time === null ? null : e.tokens / e.compute_time,
      tok_s: e.tokens / e.time, time_s: e.time, memory_time_s: e.memory_time, compute_time_s: e.compute_time,
      bound_by: e.compute_time === null || e.memory_time >= e.compute_time ? "memory" : "compute",
      traffic_bytes: traffic, weight_sweep_bytes: e.sweep, kv_reread_bytes: e.reread, kv_write_bytes: e.write,
      linear_flops: e.linear_flops, attention_flops: e.attention_flops,
      bytes_per_token: traffic / e.tokens, flops_per_token: (e.linear_flops + e.attention_flops) / e.tokens,
      crossover_tokens: r.linear !== null ? crossover(m, r, mode) : null,
      ttft_ok: budget === null ? null : e.time <= budget,
      crossover_with_attention_tokens: crossoverWithAttention(m, r, mode, chosen,
        m.context_limit !== null && m.context_limit !== undefined ? m.context_limit : w.alloc_context)
    };
  }

  /* one-shot ceilings at batch b over prompt lengths (servebound.core.prefill.prefill_curve) */
  function prefillCurve(hw, m, w, lengths, b) {
    var r = rates(hw, m.prefill), mode = w.expert_traffic;
    return lengths.map(function (L) {
      var e = evaluate(m, r, mode, b || 1, L, null);
      return { prompt_tokens: L, tok_s: e.tokens / e.time, memory_tok_s: e.tokens / e.memory_time,
               compute_tok_s: e.compute_time === null ? null : e.tokens / e.compute_time, time_s: e.time,
               bound_by: e.compute_time === null || e.memory_time >= e.compute_time ? "memory" : "compute" };
    });
  }

  /* servebound.core.prefill.prefill_range: T_pf,lo and T_pf,hi over every prompt length that fits */
  function prefillRange(hw, m, w, batch) {
    var b = batch || 1, longest, by;
    if (m.context_limit !== null && m.context_limit !== undefined) { longest = m.context_limit; by = "context_limit"; }
    else { longest = w.alloc_context; by = "alloc_context"; }
    var margin = hw.memory_bytes - m.resident_bytes - w.overhead_bytes;
    function empty(verdict, limit) {
      return { verdict: verdict, batch: b, max_prompt_tokens: 0, limited_by: limit, lo_tok_s: null,
               lo_prompt_tokens: null, lo_bound_by: null, hi_tok_s: null, hi_prompt_tokens: null, hi_bound_by: null };
    }
    if (margin < 0) return empty("no_resident_fit", "memory");
    var budget = margin / b;
    if (kvBytes(m.kv_alloc, longest) > budget) {
      var fitting = maxContextWithin(m.kv_alloc, budget);
      longest = fitting === null ? -1 : fitting;
      by = "memory";
    }
    if (longest < 1) return empty(kvBytes(m.kv_alloc, 1) <= margin ? "no_batch_fit" : "no_session_fit", by);
    var r = rates(hw, m.prefill), mode = w.expert_traffic;
    var lo = Infinity, hi = -Infinity, loL = 0, hiL = 0, loBy = null, hiBy = null;
    for (var L = 1; L <= longest; L++) {
      var e = evaluate(m, r, mode, b, L, null), t = e.tokens / e.time;
      var bound = e.memory_time >= e.time ? "memory" : "compute";
      if (t < lo) { lo = t; loL = L; loBy = bound; }
      if (t > hi) { hi = t; hiL = L; hiBy = bound; }
    }
    return { verdict: "fits", batch: b, max_prompt_tokens: longest, limited_by: by, lo_tok_s: lo,
             lo_prompt_tokens: loL, lo_bound_by: loBy, hi_tok_s: hi, hi_prompt_tokens: hiL, hi_bound_by: hiBy };
  }

  // ------------------------------------------------------------------ the derivation's toy
  /* servebound.web.pages.derivation_toy.read_following: L_read following L_alloc, the unread rest
   * (1 - fraction) L_alloc rounded half to even (Python's round), at most `cap` */
  function readFollowing(reserved, fraction, cap) {
    var x = (1.0 - fraction) * reserved, r = Math.round(x);
    if (x - Math.floor(x) === 0.5) r = Math.floor(x) % 2 === 0 ? Math.floor(x) : Math.floor(x) + 1;
    return reserved - Math.min(r, cap);
  }

  // ------------------------------------------------------------------ a typed value's text
  /* servebound.inputs.workload's grammar of a number (NUMBER_PATTERN, TOKENS_PATTERN; Input.parse):
   * digits with "," or "_" between groups, a decimal part, an exponent; a token count may instead end in
   * k or K (10^3), m or M (10^6), with no exponent. The value (a whole number for an int), or NaN where
   * the text is refused. tests/web/test_conformance.py checks it against Input.parse on one table. */
  var DIGITS = "[0-9]+(?:[,_][0-9]+)*", MANTISSA = "[+-]?(?:" + DIGITS + "(?:\\.[0-9]*)?|\\.[0-9]+)";
  var NUMBER = new RegExp("^\\s*" + MANTISSA + "(?:[eE][+-]?[0-9]+)?\\s*$");
  var TOKENS = new RegExp("^\\s*(?:" + MANTISSA + "(?:[eE][+-]?[0-9]+)?|" + MANTISSA + "[kKmM])\\s*$");
  var SCALE = { k: "e3", K: "e3", m: "e6", M: "e6" };
  function parseNumber(text, kind, tokens) {
    var t = String(text).trim();
    if (!(tokens ? TOKENS : NUMBER).test(t)) return NaN;
    t = t.replace(/[,_]/g, "");
    var last = t.charAt(t.length - 1);
    var v = Number(SCALE[last] ? t.slice(0, -1) + SCALE[last] : t);
    return !isFinite(v) || (kind === "int" && Math.floor(v) !== v) ? NaN : v;
  }

  var api = {
    readFollowing: readFollowing, parseNumber: parseNumber,
    MAX_BATCH: MAX_BATCH, CONTEXT_CAP: CONTEXT_CAP,
    kvBytes: kvBytes, grows: grows, maxContextWithin: maxContextWithin, distinct: distinct, wBatch: wBatch,
    wActive: wActive, memoryFitBatch: memoryFitBatch, decode: decode, decodeCurve: decodeCurve,
    contextRange: contextRange, contextCurve: contextCurve, rates: rates, prefill: prefill,
    modeRates: modeRates, decodeCompute: decodeCompute,
    prefillCurve: prefillCurve, prefillRange: prefillRange, crossover: crossover,
    crossoverWithAttention: crossoverWithAttention
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.servebound_calc = api;
})(typeof self !== "undefined" ? self : this);
