/* Runs conformance vectors (servebound.views.conformance.build_vectors) through calc.js under Node.
 *
 *   node tests/web/run_conformance.js VECTORS.json CALC.js
 *
 * Prints one JSON object: {count, checked_numbers, mismatches: [{index, kind, path, expected, got}]}.
 * A number matches when |got - expected| <= tol * max(|got|, |expected|); everything else must be equal.
 * Keys the port returns beyond the expected ones are ignored.
 */
"use strict";
var fs = require("fs");
var path = require("path");

var vectors = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
var calc = require(path.resolve(process.argv[3]));
var tol = vectors.tolerance_relative;
var mismatches = [], numbers = 0;

function compare(index, kind, where, expected, got) {
  if (expected === null || typeof expected !== "object") {
    if (typeof expected === "number" && typeof got === "number") {
      numbers += 1;
      var scale = Math.max(Math.abs(expected), Math.abs(got));
      if (Math.abs(got - expected) <= tol * scale) return;
    } else if (expected === got || (expected === null && got === undefined)) {
      return;
    }
    mismatches.push({ index: index, kind: kind, path: where, expected: expected, got: got === undefined ? "(missing)" : got });
    return;
  }
  if (got === null || typeof got !== "object") {
    mismatches.push({ index: index, kind: kind, path: where, expected: expected, got: got === undefined ? "(missing)" : got });
    return;
  }
  Object.keys(expected).forEach(function (k) { compare(index, kind, where + "." + k, expected[k], got[k]); });
}

function run(v) {
  switch (v.kind) {
    case "decode": return calc.decode(v.hardware, v.model, v.workload);
    case "context_range": return calc.contextRange(v.hardware, v.model, v.workload);
    case "prefill": return calc.prefill(v.hardware, v.model, v.workload, v.prefill);
    case "prefill_range": return calc.prefillRange(v.hardware, v.model, v.workload, v.batch);
    case "kv_inverse": return { max_context: calc.maxContextWithin(v.shape, v.budget_bytes) };
    default: throw new Error("unknown kind " + v.kind);
  }
}

vectors.vectors.forEach(function (v, i) {
  var got;
  try { got = run(v); } catch (err) { mismatches.push({ index: i, kind: v.kind, path: "", expected: "a result", got: String(err) }); return; }
  compare(i, v.kind, "", v.expected, got);
});
process.stdout.write(JSON.stringify({ count: vectors.vectors.length, checked_numbers: numbers, mismatches: mismatches.slice(0, 50), mismatch_count: mismatches.length }) + "\n");
