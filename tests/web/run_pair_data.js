/* Runs calc.js on what pair pages hand their script: each page's pair-data (hardware, model, query), the
 * query turned into calc.js's workload as site.js's workloadOf does.
 *
 *   node tests/web/run_pair_data.js PAGES.json CALC.js
 *
 * PAGES.json is a list of pair-data objects; prints one JSON list of calc.decode results, in order.
 */
"use strict";
var fs = require("fs");
var path = require("path");

var pages = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
var calc = require(path.resolve(process.argv[3]));

function workloadOf(q) {
  return { overhead_bytes: q.overhead_gb * 1e9, alloc_context: q.alloc_context, read_context: q.read_context,
           floor: q.floor, batch: q.batch, expert_traffic: q.expert_traffic, speculation: null,
           kv_allocation: q.kv_allocation };
}

process.stdout.write(JSON.stringify(pages.map(function (data) {
  return calc.decode(data.hardware, data.model, workloadOf(data.query));
})) + "\n");
