// The clusters page: one grouped bar chart, each cluster's share of all records next to its share of the
// annotated records (a cluster the annotators have neglected shows a short second bar).
(function () {
  "use strict";
  var box = document.getElementById("cluster-chart");
  var source = document.getElementById("cluster-chart-data");
  if (!box || !source || !window.Plotly) return;
  var data = JSON.parse(source.textContent);
  var percent = function (values) { return values.map(function (v) { return 100 * v; }); };
  window.Plotly.newPlot(box, [
    { type: "bar", name: gettext("all records"), x: data.clusters, y: percent(data.share), marker: { color: "#9db4ea" } },
    { type: "bar", name: gettext("annotated records"), x: data.clusters, y: percent(data.annotated_share),
      marker: { color: "#2d5bd3" } }
  ], {
    barmode: "group", height: 260, margin: { l: 50, r: 10, t: 10, b: 40 },
    yaxis: { title: { text: gettext("% of records") }, rangemode: "tozero" },
    separators: window.deidloopCharts.separators,
    legend: { orientation: "h", y: 1.12 }, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "#fff"
  }, { displayModeBar: false, responsive: true });
  box.dataset.ready = "true";
})();
