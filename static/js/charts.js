// What every chart page shares: plotly's look and settings, and the PNG / SVG download buttons
// (each `.chart-actions` element names its chart in data-chart and the file in data-filename).
(function () {
  "use strict";
  var font = {family: "system-ui, -apple-system, 'Segoe UI', sans-serif", size: 13, color: "#1d2330"};

  // Numbers on the axes and in the tooltips as the page's language writes them (decimal, then thousands mark).
  var separators = (document.documentElement.lang || "en").slice(0, 2) === "es" ? ",." : ".,";

  function layout(extra) {
    return Object.assign({font: font, separators: separators, margin: {l: 64, r: 16, t: 40, b: 52}, paper_bgcolor: "#fff",
      plot_bgcolor: "#fff", legend: {orientation: "h", x: 0, y: 1.02, yanchor: "bottom", traceorder: "normal"},
      hoverlabel: {font: {family: font.family}}}, extra);
  }

  function axis(title, extra) {
    return Object.assign({title: {text: title}, gridcolor: "#eceff4", zeroline: false, linecolor: "#d9dee7"},
      extra || {});
  }

  function formatNumber(value, digits) {
    return Number(value).toLocaleString(document.documentElement.lang || "en",
      {minimumFractionDigits: digits, maximumFractionDigits: digits});
  }

  function addDownloadButtons(size) {
    document.querySelectorAll(".chart-actions").forEach(function (box) {
      ["png", "svg"].forEach(function (format) {
        var button = document.createElement("button");
        button.type = "button";
        button.className = "secondary small";
        button.textContent = interpolate(gettext("Download %s"), [format.toUpperCase()]);
        button.addEventListener("click", function () {
          Plotly.downloadImage(box.dataset.chart, {format: format, filename: box.dataset.filename,
            width: size.width, height: size.height});
        });
        box.appendChild(button);
      });
    });
  }

  window.deidloopCharts = {
    font: font,
    separators: separators,
    config: {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"]},
    palette: ["#2d5bd3", "#e07b39", "#1f9d74", "#b8418a", "#7a5cc9", "#c9a227", "#3a8fb7", "#8c564b"],
    layout: layout,
    axis: axis,
    addDownloadButtons: addDownloadButtons,
    formatNumber: formatNumber,
  };
})();
