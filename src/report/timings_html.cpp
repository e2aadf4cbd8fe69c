#include "offload_build/report/timings_html.hpp"

#include <fmt/core.h>

#include "offload_build/util/files.hpp"
#include "offload_build/util/json_text.hpp"

namespace ob::report {

namespace {

// The page: everything inline. The data sits in a JSON script element; the
// script draws from it with DOM calls only (textContent, never innerHTML), so
// no name in the build can inject markup. An error while drawing is shown on
// the page and set as data-ob-error on <html>; data-ob-rendered counts the bars.
constexpr std::string_view kHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>offload-build timings</title>
<script>
window.addEventListener('error', function (e) {
  document.documentElement.setAttribute('data-ob-error', String(e.message));
  var p = document.getElementById('ob-error');
  if (p) { p.hidden = false; p.textContent = 'This page could not be drawn: ' + e.message; }
});
</script>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .3em; } h2 { font-size: 1.1em; margin: 1.4em 0 .4em; }
#ob-error { color: #b00; font-weight: bold; }
#summary { margin: .3em 0 1em; } #summary span { display: inline-block; margin-right: 1.4em; white-space: nowrap; }
#legend span { display: inline-block; margin: 0 1.2em .4em 0; }
#legend i { display: inline-block; width: 1.6em; height: .9em; margin-right: .4em; vertical-align: -1px;
            border: 1px solid #0006; }
#legend i.served { opacity: .45; border-style: dashed; } #legend i.critical { border: 2px solid #d62728; }
#chart { overflow-x: auto; border: 1px solid #ddd; }
svg text { font: 11px system-ui, sans-serif; } .axis line { stroke: #e4e4e4; } .axis text { fill: #666; }
.lane-label { fill: #666; } rect.bar { stroke: #0005; stroke-width: .5; }
rect.bar.served { fill-opacity: .4; stroke-dasharray: 3 2; }
rect.bar.critical { stroke: #d62728; stroke-width: 2; stroke-dasharray: none; }
rect.bar.failed { stroke: #b00; stroke-width: 2; } rect.bar:hover { stroke: #000; stroke-width: 2; }
.bar-label { fill: #fff; pointer-events: none; } .bar-label.dark { fill: #222; }
table { border-collapse: collapse; } th, td { padding: .2em .8em; border-bottom: 1px solid #e4e4e4; }
th { text-align: left; background: #f4f4f4; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
</style>
</head>
<body>
<h1>offload-build timings: <span id="title"></span></h1>
<p id="ob-error" hidden></p>
<noscript><p>This page draws the build with its script; allow scripts for this file.</p></noscript>
<div id="summary"></div>
<div id="legend"></div>
<div id="chart"></div>
<p>Each bar is a job, placed at its start and as long as it ran; a lane per slot that ran jobs at once.
Pale dashed bars ran no command (served from the cache or up to date); a red outline marks the critical path
(from the job that ended last, back through the dependency that ended last). Hover a bar for details.</p>
<h2>By target</h2><table id="by-target"></table>
<h2>By kind</h2><table id="by-kind"></table>
<script type="application/json" id="ob-data">)";

constexpr std::string_view kScript = R"(</script>
<script>
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('ob-data').textContent);
  var SVG = 'http://www.w3.org/2000/svg';
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function secs(s) { return s === 0 ? '0' : s < 1 ? (s * 1000).toFixed(s < 0.01 ? 2 : 0) + ' ms' : s.toFixed(2) + ' s'; }
  function isServed(j) { return j.status === 'cached' || j.status === 'up-to-date'; }
  var jobs = data.jobs;
  document.title = 'offload-build timings: ' + data.title;
  document.getElementById('title').textContent = data.title + ' (' + data.flow + ' build)';

  var KIND = {'host-ir': '#8da0cb', 'assemble': '#a6d854', 'package': '#e78ac3', 'host': '#66c2a5',
              'image-link': '#e5c494', 'stub': '#b3b3b3',
              'link': '#fc8d62', 'unchanged': '#b3b3b3', 'cargo': '#fc8d62', 'crate': '#ffd92f'};
  var DEVICE = ['#1f77b4', '#9467bd', '#17becf', '#bcbd22', '#2ca02c', '#8c564b', '#7f7f7f'];
  var targets = [];
  jobs.forEach(function (j) { if (j.kind === 'device' && targets.indexOf(j.target) < 0) targets.push(j.target); });
  function color(j) {
    return j.kind === 'device' ? DEVICE[targets.indexOf(j.target) % DEVICE.length] : (KIND[j.kind] || '#999');
  }

  var lanes = 0, end = data.duration_s, critical = 0, n = {ran: 0, cached: 0, 'up-to-date': 0, failed: 0};
  var first = Infinity;
  jobs.forEach(function (j) {
    if (!j.reached) return;
    first = Math.min(first, j.start);
    lanes = Math.max(lanes, j.lane + 1);
    end = Math.max(end, j.start + j.dur);
    if (j.critical) critical += j.dur;
    if (j.status in n) n[j.status]++;
  });
  var summary = document.getElementById('summary');
  [['started', data.started], ['result', data.result], ['wall time', secs(data.duration_s)],
   ['jobs', jobs.length + ': ' + n.ran + ' ran, ' + n.cached + ' from cache, ' + n['up-to-date'] +
     ' up to date' + (n.failed ? ', ' + n.failed + ' failed' : '')],
   ['first job at', first === Infinity ? '-' : first > 0 ? secs(first) + ' (reading, planning)' : '0'],
   ['most at once', String(lanes)], ['critical path', secs(critical)]].forEach(function (kv) {
    var s = el('span'); s.appendChild(el('b', kv[0] + ': ')); s.appendChild(document.createTextNode(kv[1]));
    summary.appendChild(s);
  });

  var legend = document.getElementById('legend');
  function swatch(label, fill, cls) {
    var s = el('span'), i = el('i', undefined, cls || '');
    if (fill) i.style.background = fill;
    s.appendChild(i); s.appendChild(document.createTextNode(label)); legend.appendChild(s);
  }
  Object.keys(KIND).forEach(function (k) {
    if (jobs.some(function (j) { return j.kind === k; })) swatch(k, KIND[k]);
  });
  targets.forEach(function (t, i) { swatch('device ' + t, DEVICE[i % DEVICE.length]); });
  swatch('served (cache, up to date)', '#999', 'served');
  swatch('critical path', '#fff', 'critical');

  var W = Math.max(900, Math.min(2400, 120 + jobs.length * 8)), LEFT = 56, RIGHT = 16, TOP = 24, LANE = 22;
  var total = Math.max(end, 1e-3), scale = (W - LEFT - RIGHT) / total;
  var chart = svg('svg', {width: W, height: TOP + Math.max(lanes, 1) * LANE + 8, role: 'img',
                          'aria-label': 'jobs on a time axis'});
  var axis = svg('g', {'class': 'axis'});
  var step = Math.pow(10, Math.floor(Math.log10(total / 8)));
  [1, 2, 5, 10].some(function (m) { if (total / (step * m) <= 10) { step *= m; return true; } return false; });
  for (var t = 0; t <= total + 1e-9; t += step) {
    var x = LEFT + t * scale;
    axis.appendChild(svg('line', {x1: x, x2: x, y1: TOP - 6, y2: TOP + lanes * LANE}));
    var label = svg('text', {x: x, y: TOP - 10, 'text-anchor': 'middle'});
    label.textContent = secs(t); axis.appendChild(label);
  }
  chart.appendChild(axis);
  for (var l = 0; l < lanes; l++) {
    var ll = svg('text', {x: 4, y: TOP + l * LANE + 15, 'class': 'lane-label'});
    ll.textContent = 'slot ' + (l + 1); chart.appendChild(ll);
  }
  var drawn = 0;
  jobs.forEach(function (j, i) {
    if (!j.reached) return;
    var x = LEFT + j.start * scale, w = Math.max(1.5, j.dur * scale), y = TOP + j.lane * LANE + 2;
    var cls = 'bar kind-' + j.kind + (isServed(j) ? ' served' : ' ran') + (j.critical ? ' critical' : '') +
              (j.status === 'failed' ? ' failed' : '');
    var r = svg('rect', {'class': cls, x: x.toFixed(2), y: y, width: w.toFixed(2), height: LANE - 4,
                         fill: color(j), 'data-job': i, 'data-kind': j.kind, 'data-target': j.target,
                         'data-status': j.status, 'data-served': isServed(j), 'data-critical': j.critical});
    var tip = svg('title', {});
    tip.textContent = j.name + '\n' + j.status + ', ' + secs(j.dur) + ' (from ' + secs(j.start) + ')' +
                      (j.where ? '\nran ' + j.where : '') +
                      (j.critical ? '\non the critical path' : '');
    r.appendChild(tip); chart.appendChild(r); drawn++;
    if (w > 70) {
      var text = svg('text', {x: x + 4, y: y + 13, 'class': 'bar-label' + (isServed(j) ? ' dark' : '')});
      var room = Math.floor((w - 8) / 6.2);
      text.textContent = j.name.length > room ? j.name.slice(0, Math.max(1, room - 1)) + '\u2026' : j.name;
      chart.appendChild(text);
    }
  });
  document.getElementById('chart').appendChild(chart);

  function table(id, head, keyOf) {
    var rows = {}, order = [];
    jobs.forEach(function (j) {
      var k = keyOf(j);
      if (!(k in rows)) { rows[k] = {jobs: 0, ran: 0, served: 0, failed: 0, notrun: 0, time: 0, ranTime: 0, cpu: 0}; order.push(k); }
      var r = rows[k]; r.jobs++;
      if (!j.reached) { r.notrun++; return; }
      r.time += j.dur;
      r.cpu += j.cpu || 0;
      if (isServed(j)) r.served++; else { r.ranTime += j.dur; if (j.status === 'failed') r.failed++; else r.ran++; }
    });
    var tbl = document.getElementById(id), tr = el('tr');
    [head, 'jobs', 'ran', 'served', 'failed', 'not run', 'time (all jobs)', 'time (ran)', 'CPU time'].forEach(function (h) {
      tr.appendChild(el('th', h));
    });
    tbl.appendChild(tr);
    order.forEach(function (k) {
      var r = rows[k], row = el('tr');
      row.setAttribute('data-key', k);
      row.appendChild(el('td', k));
      [r.jobs, r.ran, r.served, r.failed, r.notrun, secs(r.time), secs(r.ranTime), secs(r.cpu)].forEach(function (v) {
        row.appendChild(el('td', String(v), 'n'));
      });
      tbl.appendChild(row);
    });
  }
  table('by-target', 'target', function (j) { return j.target || '(no target)'; });
  table('by-kind', 'kind', function (j) { return j.kind; });
  document.documentElement.setAttribute('data-ob-rendered', String(drawn));
})();
</script>
</body>
</html>
)";

double round_us(double s) { return static_cast<double>(static_cast<long long>(s * 1e6 + 0.5)) / 1e6; }

}  // namespace

nlohmann::json timings_data(const Timeline& t) {
  const auto lanes = assign_lanes(t);
  const auto critical = critical_path(t);
  auto jobs = nlohmann::json::array();
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& j = t.jobs[i];
    jobs.push_back({{"name", j.name}, {"kind", j.kind}, {"target", j.target}, {"status", j.status},
                    {"reached", j.reached}, {"start", round_us(j.start_s)}, {"dur", round_us(j.duration_s)},
                    {"cpu", round_us(j.cpu_s)}, {"lane", lanes[i]}, {"critical", bool(critical[i])}, {"deps", j.deps}});
    if (!j.where.empty()) jobs.back()["where"] = j.where;
  }
  return {{"title", t.title}, {"flow", t.flow}, {"started", t.started_text.empty() ? iso8601_utc(t.started) : t.started_text},
          {"duration_s", round_us(t.duration_s)}, {"result", t.result}, {"jobs", std::move(jobs)}};
}

std::string timings_html(const Timeline& t) {
  // In a script element only "</script" (and "<!--") end or confuse it; JSON
  // has '<' only inside strings, where \u003c means the same.
  std::string json;
  for (char c : util::dump_replacing(timings_data(t))) {
    if (c == '<') json += "\\u003c";
    else json += c;
  }
  return std::string(kHead) + json + std::string(kScript);
}

Result<void> write_timings(const fs::path& file, const Timeline& t) {
  const fs::path target = fs::absolute(file);
  std::error_code ec;
  if (!target.parent_path().empty()) fs::create_directories(target.parent_path(), ec);
  auto written = util::write_file_atomic(target, timings_html(t));
  if (!written)
    return Error::failure(fmt::format("cannot write the timings page {}: {}", target.string(), written.error().message));
  return {};
}

}  // namespace ob::report
