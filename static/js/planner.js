// The release planner's charts, drawn from the plan the page embeds (json_script "planner-data").
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var source = document.getElementById("planner-data");  // absent when the parameters need fixing
  if (!window.Plotly || !source) return;
  var data = JSON.parse(source.textContent);
  var plan = data.plan;
  var charts = window.deidloopCharts;
  var config = charts.config, axis = charts.axis;
  var colors = {traditional: "#667085", safe_forward: "#1f9d74", attack_forward: "#2d5bd3", attack_back: "#e07b39"};
  var dashes = {traditional: "dot", safe_forward: "solid", attack_forward: "dash", attack_back: "dashdot"};
  var order = ["traditional", "safe_forward", "attack_forward", "attack_back"];
  var money = function (v) { return charts.formatNumber(v, 2); };

  function layout(extra) {
    return charts.layout(Object.assign({margin: {l: 70, r: 16, t: 40, b: 52}, hovermode: "x unified"}, extra));
  }
  // Red bands over the α at which the attacker's best attack pays (runs of consecutive grid points).
  function attackBands() {
    var shapes = [], start = null, a = plan.alphas;
    function half(k, side) { return k + side < 0 || k + side >= a.length ? a[k] : (a[k] + a[k + side]) / 2; }
    plan.attacker_attacks.forEach(function (attacks, k) {
      if (attacks && start === null) start = k;
      if ((!attacks || k === a.length - 1) && start !== null) {
        var end = attacks ? k : k - 1;
        shapes.push({type: "rect", xref: "x", yref: "paper", x0: half(start, -1), x1: half(end, 1), y0: 0, y1: 1,
          fillcolor: "rgba(198, 40, 40, 0.08)", line: {width: 0}, layer: "below"});
        start = null;
      }
    });
    return shapes;
  }
  var alphaAxis = axis(gettext("α — documents annotated in total"), {range: plan.alphas.length > 1 ? null : [plan.alphas[0] - 1, plan.alphas[0] + 1]});

  var publisher = order.map(function (key) {
    var outcome = plan.outcomes[key];
    return {type: "scatter", mode: "lines", name: data.policies[key], x: plan.alphas, y: outcome.publisher_payoffs,
      line: {color: colors[key], width: key === "safe_forward" ? 3 : 2, dash: dashes[key]},
      hovertemplate: "%{y:,.2f}<extra>" + data.policies[key] + "</extra>"};
  });
  order.forEach(function (key) {
    var outcome = plan.outcomes[key];
    if (outcome.best_alpha === null) return;
    publisher.push({type: "scatter", mode: "markers", x: [outcome.best_alpha], y: [outcome.best_payoff], showlegend: false,
      marker: {symbol: "star", size: 15, color: colors[key], line: {color: "#fff", width: 1}},
      hovertemplate: interpolate(gettext("best α %s"), [outcome.best_alpha]) + ": " + money(outcome.best_payoff) + "<extra>" + data.policies[key] + "</extra>"});
  });
  var zero = {type: "line", xref: "paper", x0: 0, x1: 1, y0: 0, y1: 0, line: {color: "#1d2330", width: 1, dash: "dot"}};
  Plotly.newPlot("chart-publisher", publisher, layout({xaxis: alphaAxis, yaxis: axis(gettext("your payoff")),
    shapes: attackBands().concat([zero]),
    annotations: [{xref: "paper", yref: "y", x: 1, y: 0, text: gettext("not sharing = 0"), showarrow: false, xanchor: "right",
      yanchor: "bottom", font: {size: 11, color: "#667085"}}]}), config);

  var attacker = order.map(function (key) {
    return {type: "scatter", mode: "lines", name: data.policies[key], x: plan.alphas, y: plan.outcomes[key].attacker_payoffs,
      line: {color: colors[key], width: {traditional: 7, safe_forward: 3, attack_forward: 3, attack_back: 2}[key],
        dash: dashes[key]}, opacity: key === "traditional" ? 0.35 : 1,
      hovertemplate: "%{y:,.2f}<extra>" + data.policies[key] + "</extra>"};
  });
  var budget = plan.outcomes.safe_forward.attacker_payoffs[0];
  Plotly.newPlot("chart-attacker", attacker, layout({xaxis: alphaAxis, yaxis: axis(gettext("attacker's payoff")),
    shapes: attackBands(),
    annotations: [{xref: "paper", yref: "y", x: 1, y: budget, text: gettext("B_a: not attacking"), showarrow: false, xanchor: "right",
      yanchor: "top", font: {size: 11, color: "#667085"}}]}), config);

  var curve = data.curve, traces = [];
  [["precision", gettext("Precision"), "#7a5cc9", "rgba(122, 92, 201, 0.13)"], ["recall", gettext("Recall"), "#e07b39", "rgba(224, 123, 57, 0.13)"]].forEach(function (c) {
    var band = curve[c[0]];
    traces.push({type: "scatter", mode: "lines", x: curve.alphas, y: band.lower, line: {width: 0}, showlegend: false, hoverinfo: "skip"});
    traces.push({type: "scatter", mode: "lines", x: curve.alphas, y: band.upper, line: {width: 0}, fill: "tonexty",
      fillcolor: c[3], name: interpolate(gettext("%s (95-percent band)"), [c[1]]), hoverinfo: "skip"});
    traces.push({type: "scatter", mode: "lines", x: curve.alphas, y: band.value, name: interpolate(gettext("%s (fitted)"), [c[1]]),
      line: {color: c[2], width: 2.5}, hovertemplate: "%{y:.3f}<extra>" + c[1] + "</extra>"});
    traces.push({type: "scatter", mode: "markers", x: data.measured.map(function (p) { return p.documents; }),
      y: data.measured.map(function (p) { return p[c[0]]; }), name: interpolate(gettext("%s (measured)"), [c[1]]),
      marker: {color: c[2], size: 10, line: {color: "#fff", width: 1.5}},
      hovertemplate: "%{y:.3f} measured<extra>" + c[1] + "</extra>"});
  });
  var lows = [];
  curve.alphas.forEach(function (a, k) { lows.push(curve.precision.lower[k], curve.recall.lower[k]); });
  data.measured.forEach(function (p) { lows.push(p.precision, p.recall); });
  var floor = Math.max(0, Math.min.apply(null, lows) - 0.03);
  // A long extrapolation squeezes the measured points against the axis: a log scale keeps them apart.
  var top = curve.alphas[curve.alphas.length - 1];
  var logScale = top / curve.alphas[0] > 40;
  var shapes = [{type: "rect", xref: "x", yref: "paper", x0: plan.alphas[0], x1: plan.alphas[plan.alphas.length - 1], y0: 0, y1: 1,
    fillcolor: "rgba(45, 91, 211, 0.045)", line: {width: 0}, layer: "below"}];
  var notes = [];
  if (curve.last_measured !== null) {
    shapes.push({type: "line", xref: "x", yref: "paper", x0: curve.last_measured, x1: curve.last_measured, y0: 0, y1: 1,
      line: {color: "#667085", width: 1.5, dash: "dot"}});
    notes.push({xref: "x", yref: "paper", x: curve.last_measured, y: 1, text: " " + gettext("extrapolated") + " →", showarrow: false,
      xanchor: "left", yanchor: "top", font: {size: 11, color: "#667085"}});
  }
  Plotly.newPlot("chart-curve", traces, layout({xaxis: axis(logScale ? gettext("α — documents annotated in total (log scale)") : gettext("α — documents annotated in total"),
    logScale ? {type: "log"} : {}),
    yaxis: axis(gettext("entity-level score"), {range: [floor, 1.005]}), shapes: shapes, annotations: notes}), config);

  charts.addDownloadButtons({width: 1100, height: 560});
});
