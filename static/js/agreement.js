// The agreement charts, drawn from the figures the page embeds (json_script "agreement-data").
document.addEventListener("DOMContentLoaded", function () {
  "use strict";
  var data = JSON.parse(document.getElementById("agreement-data").textContent);
  if (!window.Plotly || !document.getElementById("chart-days")) return;
  var charts = window.deidloopCharts;
  var figures = [["strict_f1", gettext("strict span F1")], ["relaxed_f1", gettext("relaxed span F1")],
                 ["kappa", gettext("Cohen's κ")], ["alpha", gettext("Krippendorff's α")]];

  var lines = figures.map(function (figure, k) {
    return {type: "scatter", mode: "lines+markers", name: figure[1],
      x: data.days.map(function (d) { return d.day; }), y: data.days.map(function (d) { return d[figure[0]]; }),
      customdata: data.days.map(function (d) { return d.records; }), connectgaps: false,
      line: {color: charts.palette[k]}, hovertemplate: gettext("%{y:.3f} over %{customdata} records") + "<extra>" + figure[1] + "</extra>"};
  });
  Plotly.newPlot("chart-days", lines, charts.layout({xaxis: charts.axis(gettext("day"), {type: "date"}),
    yaxis: charts.axis(gettext("agreement"), {range: [-0.05, 1.05]})}), charts.config);

  var names = data.labels.map(function (row) { return row.label; });
  var bars = figures.slice(0, 2).map(function (figure, k) {
    return {type: "bar", name: figure[1], x: names, y: data.labels.map(function (row) { return row[figure[0]]; }),
      marker: {color: charts.palette[k]}, hovertemplate: "%{y:.3f}<extra>" + figure[1] + "</extra>"};
  });
  Plotly.newPlot("chart-labels", bars, charts.layout({barmode: "group", xaxis: charts.axis("", {automargin: true}),
    yaxis: charts.axis(gettext("span F1"), {range: [0, 1.05]})}), charts.config);

  charts.addDownloadButtons({width: 1000, height: 560});
});
