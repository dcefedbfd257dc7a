// The people-and-costs charts, drawn from the records the page embeds (json_script "people-data").
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var data = JSON.parse(document.getElementById("people-data").textContent);
  if (!window.Plotly) return;
  var charts = window.deidloopCharts;
  if (data.quality_weeks.length && document.getElementById("chart-quality")) {
    var who = [];
    data.quality_weeks.forEach(function (w) { if (who.indexOf(w.annotator) < 0) who.push(w.annotator); });
    Plotly.newPlot("chart-quality", who.map(function (name, k) {
      var own = data.quality_weeks.filter(function (w) { return w.annotator === name; });
      return {type: "scatter", mode: "lines+markers", name: name, x: own.map(function (w) { return w.week; }),
        y: own.map(function (w) { return w.f1; }), customdata: own.map(function (w) { return w.records; }),
        line: {color: charts.palette[k % charts.palette.length]},
        hovertemplate: gettext("F1 %{y:.3f} over %{customdata} records") + "<extra>" + name + "</extra>"};
    }), charts.layout({xaxis: charts.axis(gettext("week"), {type: "date"}), yaxis: charts.axis("F1", {range: [0, 1.05]})}),
    charts.config);
  }
  if (!data.records.length) {
    charts.addDownloadButtons({width: 1000, height: 560});
    return;
  }
  var palette = charts.palette, config = charts.config, layout = charts.layout, axis = charts.axis;
  var formatNumber = charts.formatNumber;

  var names = [];
  data.records.forEach(function (r) { if (names.indexOf(r.annotator) < 0) names.push(r.annotator); });
  names.sort();
  var scatter = names.map(function (name, k) {
    var own = data.records.filter(function (r) { return r.annotator === name; });
    return {type: "scatter", mode: "markers", name: name, x: own.map(function (r) { return r.tokens; }),
      y: own.map(function (r) { return r.seconds; }),
      customdata: own.map(function (r) { return [r.fn_fixes, r.fp_fixes, r.relabels]; }),
      marker: {size: 9, color: palette[k % palette.length], opacity: 0.85, line: {width: 1, color: "#fff"}},
      hovertemplate: gettext("%{x} tokens, %{y:.0f} s<br>missed PHI added %{customdata[0]}, wrong removed %{customdata[1]}, relabels %{customdata[2]}") + "<extra>" + name + "</extra>"};
  });
  var overall = data.fits[data.overall_name];
  if (overall && data.average) {
    var tokens = data.records.map(function (r) { return r.tokens; });
    var lo = 0, hi = Math.max.apply(null, tokens) * 1.05;
    var base = overall.seconds_per_fn_fix * data.average.fn_fixes + overall.seconds_per_fp_fix * data.average.fp_fixes;
    scatter.push({type: "scatter", mode: "lines", name: gettext("overall fit (average corrections)"), x: [lo, hi],
      y: [base + overall.seconds_per_token * lo, base + overall.seconds_per_token * hi],
      line: {color: "#1d2330", width: 2, dash: "dash"}, hoverinfo: "skip"});
  }
  Plotly.newPlot("chart-seconds", scatter, layout({xaxis: axis(gettext("tokens in the record"), {rangemode: "tozero"}),
    yaxis: axis(gettext("active seconds"), {rangemode: "tozero"})}), config);

  var fitted = Object.keys(data.fits).filter(function (name) { return data.fits[name]; });
  fitted.sort(function (a, b) { return (a === data.overall_name) - (b === data.overall_name) || (a < b ? -1 : 1); });
  var parts = [[gettext("reading tokens"), "seconds_per_token", "tokens", "#9fb6ec"],
               [gettext("adding missed PHI"), "seconds_per_fn_fix", "fn_fixes", "#2d5bd3"],
               [gettext("removing wrong suggestions"), "seconds_per_fp_fix", "fp_fixes", "#e07b39"]];
  var bars = parts.map(function (part) {
    return {type: "bar", name: part[0], x: fitted, marker: {color: part[3]},
      y: fitted.map(function (name) { return data.fits[name][part[1]] * data.average[part[2]]; }),
      hovertemplate: "%{y:.1f} s " + part[0] + "<extra>%{x}</extra>"};
  });
  var totals = fitted.map(function (name) {
    return parts.reduce(function (sum, part) { return sum + data.fits[name][part[1]] * data.average[part[2]]; }, 0);
  });
  bars.push({type: "scatter", mode: "text", x: fitted, y: totals, showlegend: false, hoverinfo: "skip",
    text: totals.map(function (s) {
      return formatNumber(Math.round(s), 0) + " s · " + formatNumber(s / 3600 * data.hourly_rate, 2);
    }), textposition: "top center", textfont: {size: 12, color: "#1d2330"}});
  Plotly.newPlot("chart-breakdown", bars, layout({barmode: "stack", xaxis: axis(""),
    yaxis: axis(gettext("seconds"), {rangemode: "tozero", range: [0, Math.max.apply(null, totals.concat([1])) * 1.18]})}), config);

  charts.addDownloadButtons({width: 1000, height: 560});
});
