// Small line charts as inline SVG: no library, nothing fetched.

// points: [[x, y], ...] in data units, x ascending. Returns SVG text with the line, an optional
// dashed threshold line and the latest value as a dot.
export function lineChart(points, {width = 160, height = 36, yMax, threshold, label, className = "chart"} = {}) {
  const xs = points.map((p) => p[0]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const top = Math.max(1e-9, yMax ?? 0, threshold ?? 0, ...points.map((p) => p[1]));
  const X = (x) => (x1 === x0 ? width : ((x - x0) / (x1 - x0)) * (width - 4) + 2);
  const Y = (y) => height - 2 - (Math.max(0, y) / top) * (height - 4);
  const path = points.map((p, i) => `${i ? "L" : "M"}${X(p[0]).toFixed(1)} ${Y(p[1]).toFixed(1)}`).join("");
  const last = points[points.length - 1];
  const line = threshold === undefined ? ""
    : `<line x1="0" x2="${width}" y1="${Y(threshold).toFixed(1)}" y2="${Y(threshold).toFixed(1)}" stroke="#b3261e" stroke-dasharray="3 2"/>`;
  return `<svg class="${className}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${label ?? ""}">
    <rect width="${width}" height="${height}" fill="#f5f7fa"/>${line}
    ${points.length ? `<path d="${path}" fill="none" stroke="#1f5fbf" stroke-width="1.5"/><circle cx="${X(last[0]).toFixed(1)}" cy="${Y(last[1]).toFixed(1)}" r="2" fill="#1f5fbf"/>` : ""}</svg>`;
}

// A cluster's heat from its arrivals ({at, heat just after}) to `now`: between arrivals heat
// halves every `halfLifeMs`, so each gap is drawn as that curve, not as a straight line.
export function heatCurve(history, halfLifeMs, now) {
  const points = [];
  history.forEach((h, i) => {
    const t0 = Date.parse(h.at);
    const t1 = i + 1 < history.length ? Date.parse(history[i + 1].at) : now;
    const steps = t1 > t0 ? 8 : 0;
    for (let k = 0; k <= steps; k++) {
      const t = t0 + ((t1 - t0) * k) / Math.max(steps, 1);
      points.push([t, h.heat * Math.pow(0.5, (t - t0) / halfLifeMs)]);
    }
  });
  return points;
}
