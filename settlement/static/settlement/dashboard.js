/* The operations dashboard's charts (templates/admin/dashboard/dashboard.html), with Chart.js from
   static/vendor/chartjs. The data is the page's #dashboard-data JSON; configuration changes are
   drawn on the time series as dashed vertical lines with the game's slug. No animation, so a
   screenshot shows the finished charts; <body data-charts="ready"> once they are drawn. */
(function () {
  "use strict";

  var SPARSE_DAYS = 2;

  var COLORS = {
    handle: "rgba(54, 121, 173, 0.55)",
    ggr: "#2e7d32",
    actual: "#1565c0",
    theoretical: "#c62828",
    player: "#1565c0",
    banker: "#c62828",
    tie: "#2e7d32",
    expected: "rgba(120, 120, 120, 0.55)",
    lag: "#6a1b9a",
    marker: "#ef6c00"
  };

  // Vertical dashed lines at the days of configuration changes (options.plugins.configMarkers.changes).
  var configMarkers = {
    id: "configMarkers",
    afterDatasetsDraw: function (chart, args, options) {
      var changes = (options && options.changes) || [];
      var days = chart.data.labels || [];
      if (!changes.length || !chart.scales.x) { return; }
      var ctx = chart.ctx, area = chart.chartArea, seen = {};
      ctx.save();
      changes.forEach(function (change) {
        var index = days.indexOf(change.day);
        if (index < 0) { return; }
        var x = chart.scales.x.getPixelForValue(index);
        var row = seen[index] = (seen[index] || 0) + 1;
        ctx.strokeStyle = COLORS.marker;
        ctx.lineWidth = 1.5;
        ctx.setLineDash([5, 4]);
        ctx.beginPath();
        ctx.moveTo(x, area.top);
        ctx.lineTo(x, area.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = COLORS.marker;
        ctx.font = "11px sans-serif";
        ctx.textAlign = x > area.right - 80 ? "right" : "left";
        ctx.fillText("⚙ " + change.game, x + (ctx.textAlign === "left" ? 3 : -3), area.top + 11 * row);
      });
      ctx.restore();
    }
  };

  function markerTooltip(changes) {
    return function (items) {
      if (!items.length) { return ""; }
      var day = items[0].label;
      return changes.filter(function (c) { return c.day === day; }).map(function (c) {
        return "Configuration change (" + c.game + "): " + c.summary + (c.reason ? " — " + c.reason : "");
      });
    };
  }

  function timeOptions(data, yTitle, extra) {
    var options = {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: "index", intersect: false },
      // Ticks as "11-26": the period's heading names the year, and six fit the narrowest chart.
      scales: { x: { ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 6,
                              callback: function (value) { return String(this.getLabelForValue(value)).slice(5); } } },
                y: { title: { display: true, text: yTitle } } },
      plugins: {
        configMarkers: { changes: data.changes || [] },
        tooltip: { callbacks: { footer: markerTooltip(data.changes || []) } },
        legend: { labels: { boxWidth: 14 } }
      }
    };
    return Object.assign(options, extra || {});
  }

  function draw() {
    var source = document.getElementById("dashboard-data");
    if (!source || typeof Chart === "undefined") { return; }
    var data = JSON.parse(source.textContent);
    if (!data.days) { return; }
    Chart.register(configMarkers);
    var charts = {};
    // A line needs two days to show: with fewer days of play than that, every day is a large point
    // (the theoretical level a wide dash), and a note says why there is no trend yet.
    var playedDays = (data.rtp || []).filter(function (value) { return value !== null; }).length;
    var sparse = playedDays < SPARSE_DAYS;
    var note = document.getElementById("dashboard-sparse");
    if (note && sparse) {
      note.textContent = playedDays === 0 ? "No play settled in this period yet."
        : "Only " + playedDays + " day" + (playedDays === 1 ? "" : "s") + " with play in this period: each is drawn " +
          "as a point; lines and trends appear as days accumulate.";
      note.hidden = false;
    }
    // Sparse: a large point on each day with play, none on the empty days around it.
    function radius(normal) {
      return sparse ? function (context) { return data.rtp[context.dataIndex] === null ? 0 : 6; } : normal;
    }
    function level() { return sparse ? { pointRadius: 12, pointStyle: "line", borderWidth: 3 } : { pointRadius: 0 }; }

    charts.handle = new Chart(document.getElementById("chart-handle-ggr"), {
      data: {
        labels: data.days,
        datasets: [
          { type: "bar", label: "Handle", data: data.handle, backgroundColor: COLORS.handle, order: 2 },
          { type: "line", label: "GGR", data: data.ggr, borderColor: COLORS.ggr, backgroundColor: COLORS.ggr,
            pointRadius: radius(2), tension: 0.2, order: 1 }
        ]
      },
      options: timeOptions(data, "Amount")
    });

    var rtpSets = [
      { label: "Actual (all bets)", data: data.rtp, borderColor: COLORS.actual, backgroundColor: COLORS.actual,
        pointRadius: radius(2), spanGaps: true },
      Object.assign({ label: "Theoretical (all bets)", data: data.theoretical_rtp, borderColor: COLORS.theoretical,
        backgroundColor: COLORS.theoretical, borderDash: [6, 4], spanGaps: true, stepped: true }, level())
    ];
    Object.keys(data.rtp_by_type || {}).forEach(function (type) {
      var color = COLORS[type.toLowerCase()] || "#555";
      var name = data.rtp_by_type[type].label;
      rtpSets.push({ label: name + " actual", data: data.rtp_by_type[type].actual, borderColor: color,
                     backgroundColor: color, pointRadius: radius(1), hidden: true, spanGaps: true });
      rtpSets.push(Object.assign({ label: name + " theoretical", data: data.rtp_by_type[type].theoretical,
                     borderColor: color, backgroundColor: color, borderDash: [6, 4], hidden: true, spanGaps: true,
                     stepped: true }, level()));
    });
    charts.rtp = new Chart(document.getElementById("chart-rtp"), {
      type: "line",
      data: { labels: data.days, datasets: rtpSets },
      options: timeOptions(data, "Return to player (%)")
    });

    var outcomes = data.outcomes || { labels: [], observed: [], expected: [] };
    charts.outcomes = new Chart(document.getElementById("chart-outcomes"), {
      type: "bar",
      data: {
        labels: outcomes.labels,
        datasets: [
          { label: "Observed (%)", data: outcomes.observed,
            backgroundColor: [COLORS.player, COLORS.banker, COLORS.tie, COLORS.marker] },
          { label: "Exact probability (%)", data: outcomes.expected, backgroundColor: COLORS.expected }
        ]
      },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
                 scales: { y: { beginAtZero: true, title: { display: true, text: "% of rounds" } } },
                 plugins: { legend: { labels: { boxWidth: 14 } } } }
    });

    charts.lag = new Chart(document.getElementById("chart-lag"), {
      type: "line",
      data: { labels: data.days, datasets: [
        { label: "Average lag (s)", data: data.lag_avg_s, borderColor: COLORS.lag, backgroundColor: COLORS.lag,
          pointRadius: radius(2), spanGaps: true }
      ] },
      options: timeOptions(data, "Seconds", {})
    });

    window.dashboardCharts = charts;
    document.body.setAttribute("data-charts", "ready");
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
