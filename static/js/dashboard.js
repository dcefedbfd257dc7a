// The learning dashboard: the live learning curve (one point per model version) with a simulation's mean
// curves (± one standard deviation) drawn over it, the current model's scores per PHI type, PNG/SVG
// downloads, and a running simulation followed over the project's websocket (htmx polling stands in when
// the socket is not there).
(function () {
  "use strict";
  var dataNode = document.getElementById("dashboard-data");
  if (!dataNode) return;
  var data = JSON.parse(dataNode.textContent);
  var curveChart = document.getElementById("curve-chart");
  var typesChart = document.getElementById("types-chart");
  var note = document.getElementById("curve-note");
  var controls = {
    metric: document.getElementById("curve-metric"),
    x: document.getElementById("curve-x"),
    type: document.getElementById("curve-type"),
    overlay: document.getElementById("curve-overlay")
  };
  var renders = 0;

  var GRID = "#e9edf3", LIVE = "#2d5bd3", RANDOM = "#7b8494";
  var PALETTE = ["#e8590c", "#2f9e44", "#ae3ec9", "#d6336c", "#0c8599", "#f59f00", "#5c940d", "#862e9c"];
  var FONT = window.deidloopCharts.font;
  // Entity-level scores are the ones reported per PHI type; token metrics and leakage fall back to these.
  var SEPARATORS = window.deidloopCharts.separators;
  var PER_TYPE_FALLBACK = { token_f1: "entity_f1", token_p: "entity_p", token_r: "entity_r", leakage: "entity_r" };
  var PER_TYPE_SCORE = { entity_f1: "f1", entity_p: "p", entity_r: "r" };

  function byKey(list, key) {
    for (var i = 0; i < list.length; i++) if (list[i].key === key) return list[i];
    return null;
  }

  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }

  function strategyColor(name, index) {
    return name.toLowerCase() === "random" ? RANDOM : PALETTE[index % PALETTE.length];
  }

  function overlayBatch(key) {
    if (!key) return null;
    for (var i = 0; i < data.simulations.length; i++) {
      var batches = data.simulations[i].batches;
      for (var j = 0; j < batches.length; j++) if (batches[j].key === key) return batches[j];
    }
    return null;
  }

  function state() {
    return {
      metric: controls.metric.value, x: controls.x.value, type: controls.type.value,
      overlay: controls.overlay.value, renders: renders
    };
  }

  function liveValue(point, metric, type) {
    if (!type) return point.values[metric];
    var scores = point.per_type[type];
    return scores ? scores[PER_TYPE_SCORE[metric]] : null;
  }

  function isLeakage(metric) { return metric === "leakage"; }

  function hoverNumber(metric) { return isLeakage(metric) ? "%{y:.2%}" : "%{y:.3f}"; }

  // The simulation's curve for the chosen metric and type, or the reason there is none.
  function simulationSeries(strategy, s) {
    if (s.x !== "n_documents") return { why: gettext("Simulations count training documents: choose \u201cTraining documents\u201d to compare.") };
    if (s.type) {
      if (s.metric !== "entity_f1") return { why: gettext("Simulations record entity F1 per PHI type: choose \u201cEntity F1\u201d to compare.") };
      var perType = strategy.per_type_f1[s.type];
      return perType ? { y: perType, sd: null } : { why: interpolate(gettext("The simulation has no %s in its evaluation documents."), [s.type]) };
    }
    if (!strategy.values[s.metric]) return { why: gettext("Simulations measure entity precision, recall and F1: choose one of them to compare.") };
    return { y: strategy.values[s.metric], sd: strategy.sd[s.metric] || null };
  }

  function curveTraces(s) {
    var traces = [], why = "";
    var metricLabel = byKey(data.metrics, s.metric).label;
    var batch = overlayBatch(s.overlay);
    if (batch) {
      batch.strategies.forEach(function (strategy, index) {
        var series = simulationSeries(strategy, s);
        if (!series.y) { why = series.why; return; }
        var color = strategyColor(strategy.name, index);
        var hasSpread = series.sd && series.sd.some(function (v) { return v > 0; });
        if (hasSpread) {
          traces.push({
            x: strategy.docs, y: series.y.map(function (v, i) { return Math.min(1, v + series.sd[i]); }),
            mode: "lines", line: { width: 0, color: color }, hoverinfo: "skip", showlegend: false,
            legendgroup: strategy.name, meta: { kind: "band", strategy: strategy.name }
          });
          traces.push({
            x: strategy.docs, y: series.y.map(function (v, i) { return Math.max(0, v - series.sd[i]); }),
            mode: "lines", line: { width: 0, color: color }, fill: "tonexty", fillcolor: alpha(color, 0.14),
            hoverinfo: "skip", showlegend: false, legendgroup: strategy.name, meta: { kind: "band", strategy: strategy.name }
          });
        }
        traces.push({
          x: strategy.docs, y: series.y, customdata: series.sd || series.y.map(function () { return 0; }),
          name: interpolate(hasSpread ? gettext("%s (simulated, mean ± sd)") : gettext("%s (simulated)"), [strategy.name]),
          mode: "lines+markers", line: { color: color, width: 2, dash: "dash" }, marker: { size: 6, color: color },
          legendgroup: strategy.name, meta: { kind: "simulation", strategy: strategy.name },
          hovertemplate: "<b>" + strategy.name + "</b> " + gettext("(simulated)") + "<br>" + gettext("%{x} documents") + "<br>" + metricLabel + " " +
            hoverNumber(s.metric) + (hasSpread ? " ± %{customdata:.3f}" : "") + "<extra></extra>"
        });
      });
    }
    var points = data.points.filter(function (p) { return liveValue(p, s.metric, s.type) !== null && liveValue(p, s.metric, s.type) !== undefined; });
    var xLabel = byKey(data.x_axes, s.x).label;
    traces.push({
      x: points.map(function (p) { return p[s.x]; }),
      y: points.map(function (p) { return liveValue(p, s.metric, s.type); }),
      customdata: points.map(function (p) {
        return [p.id, p.url, p.n_documents, p.n_tokens, p.annotator_hours, p.strategy || "\u2014",
                s.type && p.per_type[s.type] ? p.per_type[s.type].support : ""];
      }),
      name: gettext("This project's models"), mode: "lines+markers", cliponaxis: false,
      line: { color: LIVE, width: 3 },
      marker: {
        color: LIVE, line: { color: "#fff", width: 1.5 },
        size: points.map(function (p) { return p.is_current ? 15 : 10; }),
        symbol: points.map(function (p) { return p.is_current ? "diamond" : "circle"; })
      },
      meta: { kind: "live" },
      hovertemplate: "<b>" + gettext("Model #%{customdata[0]}") + "</b> (%{customdata[5]})<br>" + metricLabel +
        (s.type ? " \u00b7 " + s.type + " " + gettext("(%{customdata[6]} gold)") : "") + ": " + hoverNumber(s.metric) +
        "<br>" + gettext("%{customdata[2]} documents \u00b7 %{customdata[3]:,} tokens \u00b7 %{customdata[4]:.2f} annotator-hours") +
        "<br><i>" + gettext("click to open") + "</i><extra></extra>"
    });
    return { traces: traces, why: batch ? why : "", metricLabel: metricLabel, xLabel: xLabel, livePoints: points.length };
  }

  function yRange(traces, metric) {
    var ys = [];
    traces.forEach(function (t) { t.y.forEach(function (v) { if (typeof v === "number") ys.push(v); }); });
    if (!ys.length) return isLeakage(metric) ? [0, 0.1] : [0, 1.02];
    var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys);
    if (isLeakage(metric)) return [0, Math.max(0.01, hi * 1.2)];
    var bottom = Math.max(0, Math.floor((lo - 0.04) * 20) / 20);
    return [bottom, Math.min(1.02, Math.max(hi + 0.02, bottom + 0.1))];
  }

  function renderCurve() {
    if (!curveChart || !window.Plotly) return Promise.resolve();
    var s = state();
    var built = curveTraces(s);
    var title = interpolate(gettext("%(metric)s against %(axis)s"), { metric: built.metricLabel, axis: built.xLabel.toLowerCase() }, true) +
      " \u00b7 " + (s.type ? s.type : gettext("all PHI types"));
    var layout = {
      separators: SEPARATORS,
      title: { text: data.project.name + ": " + title, x: 0, xref: "container", xanchor: "left", pad: { l: 12 }, font: { size: 16 } },
      font: FONT, paper_bgcolor: "#fff", plot_bgcolor: "#fff",
      margin: { l: 64, r: 24, t: 48, b: 40 }, hovermode: "closest", height: 470,
      xaxis: {
        title: { text: built.xLabel }, rangemode: "tozero", gridcolor: GRID, zeroline: false,
        tickformat: s.x === "annotator_hours" ? ".2f" : ",d", linecolor: "#c3cad6", showline: true
      },
      yaxis: {
        title: { text: (isLeakage(s.metric) ? gettext("Leakage (share of PHI tokens missed)") : built.metricLabel) +
          (s.type ? " \u00b7 " + s.type : "") }, range: yRange(built.traces, s.metric),
        tickformat: isLeakage(s.metric) ? ".1%" : ".2f", gridcolor: GRID, zeroline: false, linecolor: "#c3cad6", showline: true
      },
      showlegend: true, legend: { orientation: "h", x: 0, y: -0.16, xanchor: "left", yanchor: "top" },
      hoverlabel: { font: { family: FONT.family, size: 13 } }
    };
    var config = {
      responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"],
      toImageButtonOptions: { format: "png", filename: downloadName(curveChart), scale: 2, width: 1100, height: 560 }
    };
    note.textContent = built.why || (built.livePoints ? gettext("Click a point to open that model version.") :
      gettext("No model version has a score here yet: models are measured on the project's evaluation documents."));
    note.classList.toggle("dash-note-warn", !!built.why);
    return window.Plotly.react(curveChart, built.traces, layout, config).then(function () {
      renders += 1;
      curveChart.dataset.renders = String(renders);
      curveChart.dataset.metric = s.metric;
      curveChart.dataset.x = s.x;
      curveChart.dataset.type = s.type;
      curveChart.dataset.overlay = s.overlay;
    });
  }

  function renderTypes() {
    if (!typesChart || !window.Plotly) return;
    var current = data.points.filter(function (p) { return p.id === data.current; })[0];
    var types = current ? data.types.filter(function (t) { return current.per_type[t]; }) : [];
    if (!types.length) {
      typesChart.classList.add("dash-empty");
      typesChart.textContent = gettext("The current model has no per-type scores (no evaluation documents).");
      return;
    }
    var labels = types.map(function (t) { return t + " (" + current.per_type[t].support + ")"; });
    function scores(key) { return types.map(function (t) { return current.per_type[t][key]; }); }
    var traces = [
      { type: "bar", orientation: "h", name: "F1", y: labels, x: scores("f1"), customdata: types,
        marker: { color: alpha(LIVE, 0.8) }, hovertemplate: "<b>%{customdata}</b><br>F1 %{x:.3f}<extra></extra>" },
      { type: "scatter", mode: "markers", name: gettext("Precision"), y: labels, x: scores("p"), customdata: types,
        marker: { symbol: "diamond", size: 9, color: "#e8590c", line: { color: "#fff", width: 1 } },
        hovertemplate: "<b>%{customdata}</b><br>" + gettext("precision") + " %{x:.3f}<extra></extra>" },
      { type: "scatter", mode: "markers", name: gettext("Recall"), y: labels, x: scores("r"), customdata: types,
        marker: { symbol: "circle", size: 9, color: "#2f9e44", line: { color: "#fff", width: 1 } },
        hovertemplate: "<b>%{customdata}</b><br>" + gettext("recall") + " %{x:.3f}<extra></extra>" }
    ];
    var layout = {
      separators: SEPARATORS,
      title: { text: data.project.name + ": " + interpolate(gettext("entity scores per PHI type, model #%s"), [current.id]), x: 0, xref: "container", xanchor: "left", pad: { l: 12 }, font: { size: 16 } },
      font: FONT, paper_bgcolor: "#fff", plot_bgcolor: "#fff", height: 110 + 24 * types.length,
      margin: { l: 10, r: 24, t: 48, b: 40 }, bargap: 0.35, hovermode: "closest",
      xaxis: { range: [0, 1.04], tickformat: ".1f", gridcolor: GRID, zeroline: false, side: "bottom" },
      yaxis: { automargin: true, autorange: "reversed", tickfont: { size: 12 } },
      legend: { orientation: "h", x: 1, xanchor: "right", y: 1.02, yanchor: "bottom" }
    };
    var config = {
      responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"],
      toImageButtonOptions: { format: "png", filename: downloadName(typesChart), scale: 2 }
    };
    window.Plotly.newPlot(typesChart, traces, layout, config).then(function () {
      typesChart.on("plotly_click", function (event) {
        var type = event.points && event.points[0] && event.points[0].customdata;
        if (!type) return;
        controls.type.value = type;
        controlsChanged();
        document.getElementById("curve").scrollIntoView({ behavior: "smooth" });
      });
    });
  }

  function downloadName(chart) {
    var box = document.querySelector('.dash-downloads[data-chart="' + chart.id + '"]');
    return box ? box.dataset.filename : chart.id;
  }

  // Per type only entity scores exist: the other metrics are disabled, and a chosen one is replaced.
  function syncMetricOptions() {
    var perType = !!controls.type.value;
    Array.prototype.forEach.call(controls.metric.options, function (option) {
      option.disabled = perType && !PER_TYPE_SCORE[option.value];
    });
    if (perType && !PER_TYPE_SCORE[controls.metric.value]) controls.metric.value = PER_TYPE_FALLBACK[controls.metric.value];
  }

  function controlsChanged() {
    syncMetricOptions();
    return renderCurve();
  }

  function addOverlayOptions(run) {
    var existing = {};
    Array.prototype.forEach.call(controls.overlay.options, function (o) { existing[o.value] = true; });
    run.batches.forEach(function (batch) {
      if (existing[batch.key]) return;
      var option = document.createElement("option");
      option.value = batch.key;
      option.textContent = batch.label;
      controls.overlay.insertBefore(option, controls.overlay.options[1] || null);
    });
  }

  // A finished simulation fragment carries its curves: add them and draw them over the live curve.
  function absorbSimulation() {
    var node = document.getElementById("simulation-data");
    if (!node || !controls.overlay) return;
    var run = JSON.parse(node.textContent);
    if (!run || !run.batches.length) return;
    var known = data.simulations.some(function (r) { return r.id === run.id; });
    if (!known) {
      data.simulations.unshift(run);
      run.batches.forEach(function (batch) {
        batch.strategies.forEach(function (strategy) {
          Object.keys(strategy.per_type_f1).forEach(function (type) {
            if (data.types.indexOf(type) < 0) {
              data.types.push(type);
              var option = document.createElement("option");
              option.value = option.textContent = type;
              controls.type.appendChild(option);
            }
          });
        });
      });
      addOverlayOptions(run);
      controls.overlay.value = run.batches[0].key;
      renderCurve();
    }
  }

  function refreshSimulation() {
    var box = document.getElementById("simulation-run");
    if (box && window.htmx) window.htmx.ajax("GET", box.dataset.url, { target: "#simulation-run", swap: "outerHTML" });
  }

  function showProgress(message) {
    var box = document.getElementById("simulation-run");
    if (!box || String(message.simulation) !== box.dataset.run) return;
    var bar = box.querySelector("progress");
    if (bar && message.total) bar.value = Math.round(100 * message.done / message.total);
    var count = box.querySelector("[data-sim-count]");
    if (count && message.total) count.textContent = interpolate(gettext("%(done)s of %(total)s models"), { done: message.done, total: message.total }, true);
    var text = box.querySelector("[data-sim-text]");
    if (text && message.text) text.textContent = message.text;
  }

  function follow() {
    var section = document.getElementById("simulation");
    if (!section || !window.deidloopFollow) return;
    window.deidloopFollow(section.dataset.socket, {message: function (message) {
      if (message.type !== "notice") return;
      if (message.kind === "simulation_progress") {
        showProgress(message);
        if (message.stage === "failed") refreshSimulation();
      } else if (message.kind === "simulation_done") {
        refreshSimulation();
      }
    }});
  }

  function wireDownloads() {
    Array.prototype.forEach.call(document.querySelectorAll(".dash-downloads"), function (box) {
      box.addEventListener("click", function (event) {
        var button = event.target.closest("[data-download]");
        var chart = document.getElementById(box.dataset.chart);
        if (!button || !chart || !window.Plotly || !chart.data) return;
        window.Plotly.downloadImage(chart, {
          format: button.dataset.download, filename: box.dataset.filename,
          width: chart.offsetWidth, height: chart.offsetHeight, scale: button.dataset.download === "png" ? 2 : 1
        });
      });
    });
  }

  function start() {
    if (!window.Plotly) {
      if (note) note.textContent = gettext("The charting library did not load; the tables below hold the same figures.");
      return;
    }
    if (curveChart) {
      ["metric", "x", "type", "overlay"].forEach(function (name) {
        controls[name].addEventListener("change", controlsChanged);
      });
      syncMetricOptions();
      renderCurve().then(function () {
        curveChart.on("plotly_click", function (event) {
          var point = event.points && event.points[0];
          if (point && point.data.meta && point.data.meta.kind === "live") location.href = point.customdata[1];
        });
      });
      renderTypes();
      wireDownloads();
    }
    document.body.addEventListener("htmx:afterSettle", absorbSimulation);
    follow();
  }

  window.deidloopDashboard = { state: state, render: renderCurve };
  start();
})();
