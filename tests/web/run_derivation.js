/* Runs static/derivation.js (and calc.js, chart_axes.js, chart_markup.js under it) under Node for the
 * derivation's Node test.
 *
 *   node tests/web/run_derivation.js CASES.json DERIVATION.js
 *
 * CASES: {toys: [toy...], read: [[reserved, fraction, cap]...], formats: [[value, digits]...]}.
 * Prints {figures: [{id: svg}...], read: [L_read...], fixed: [...], g: [...], g3: [...], repr: [...]}.
 */
"use strict";
var fs = require("fs");
var path = require("path");

var cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
var derivation = require(path.resolve(process.argv[3]));
var calc = require(path.join(path.dirname(path.resolve(process.argv[3])), "calc.js"));
process.stdout.write(JSON.stringify({
  figures: cases.toys.map(function (t) { return derivation.figures(t); }),
  queries: cases.toys.map(function (t) { return derivation.query(cases.description, t); }),
  read: cases.read.map(function (r) { return calc.readFollowing(r[0], r[1], r[2]); }),
  fixed: cases.formats.map(function (f) { return derivation.fixed(f[0], f[1]); }),
  g: cases.formats.map(function (f) { return derivation.fmtG(f[0]); }),
  g3: cases.formats.map(function (f) { return derivation.fmtG(f[0], 3); }),
  repr: cases.formats.map(function (f) { return derivation.pyRepr(f[0]); })
}));
