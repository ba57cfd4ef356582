/**
 * Line charts as plain SVG text, for the benchmark scripts: one or more panels side by side (e.g.
 * throughput and p99 against N), each with its own y axis, sharing the x axis. No browser, no
 * network, no dependencies: the output is deterministic for the same numbers.
 */

export interface ChartSeries {
  readonly name: string;
  /** [x, y] pairs; non-finite y values are skipped. */
  readonly points: ReadonlyArray<readonly [number, number]>;
}

export interface ChartPanel {
  readonly title: string;
  /** y-axis label with its unit, e.g. "objects/s" or "p99 (s)". */
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
}

export interface ChartSpec {
  readonly title: string;
  readonly xLabel: string;
  /** Logarithmic x axis (for N spanning orders of magnitude). @default true when max/min x ≥ 20 */
  readonly logX?: boolean;
  readonly panels: readonly ChartPanel[];
  /** A line under the title (machine, date, options). @default - none */
  readonly subtitle?: string;
}

const COLORS = ['#1f6feb', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#0a7480'];
const W = 460;
const H = 300;
const M = { left: 62, right: 16, top: 34, bottom: 46 };

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** "Nice" ticks (1, 2, 5 × 10^k) covering [0, max]. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  return ticks;
}

export function formatNumber(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`;
  if (a >= 100) return String(Math.round(v));
  return String(Number(v.toPrecision(3)));
}

/** The chart as an SVG document. */
export function svgChart(spec: ChartSpec): string {
  if (!spec.panels.length) throw new Error('svgChart: panels must list at least one panel');
  const xs = spec.panels.flatMap((p) => p.series.flatMap((s) => s.points.map(([x]) => x))).filter((x) => Number.isFinite(x));
  if (!xs.length) throw new Error('svgChart: no data points');
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const logX = spec.logX ?? (xMin > 0 && xMax / xMin >= 20);
  if (logX && xMin <= 0) throw new Error(`svgChart: logX needs positive x values (smallest is ${xMin})`);
  const xTicks = logX ? [...new Set(xs)].sort((a, b) => a - b) : niceTicks(xMax);
  const xDomain = logX ? [Math.log10(xMin), Math.log10(xMax)] : [Math.min(0, xMin), xTicks[xTicks.length - 1]];
  const head = spec.subtitle ? 52 : 34;
  const width = W * spec.panels.length;
  const height = H + head;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${esc(spec.title)}</text>`,
  ];
  if (spec.subtitle) out.push(`<text x="${width / 2}" y="38" text-anchor="middle" fill="#57606a">${esc(spec.subtitle)}</text>`);
  spec.panels.forEach((panel, pi) => {
    const ox = pi * W;
    const oy = head - 10;
    const pw = W - M.left - M.right;
    const ph = H - M.top - M.bottom;
    const ys = panel.series.flatMap((s) => s.points.map(([, y]) => y)).filter((y) => Number.isFinite(y));
    const yTicks = niceTicks(Math.max(0, ...ys));
    const yMax = yTicks[yTicks.length - 1] || 1;
    const sx = (x: number) => ox + M.left + (((logX ? Math.log10(x) : x) - xDomain[0]) / (xDomain[1] - xDomain[0] || 1)) * pw;
    const sy = (y: number) => oy + M.top + ph - (y / yMax) * ph;
    out.push(`<g><text x="${ox + M.left + pw / 2}" y="${oy + M.top - 10}" text-anchor="middle" font-size="12" font-weight="bold">${esc(panel.title)}</text>`);
    for (const t of yTicks) {
      out.push(`<line x1="${ox + M.left}" x2="${ox + M.left + pw}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#d8dee4"/>`);
      out.push(`<text x="${ox + M.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end" fill="#57606a">${formatNumber(t)}</text>`);
    }
    for (const t of xTicks) {
      out.push(`<line x1="${sx(t).toFixed(1)}" x2="${sx(t).toFixed(1)}" y1="${oy + M.top + ph}" y2="${oy + M.top + ph + 4}" stroke="#57606a"/>`);
      out.push(`<text x="${sx(t).toFixed(1)}" y="${oy + M.top + ph + 16}" text-anchor="middle" fill="#57606a">${formatNumber(t)}</text>`);
    }
    out.push(`<line x1="${ox + M.left}" x2="${ox + M.left + pw}" y1="${oy + M.top + ph}" y2="${oy + M.top + ph}" stroke="#57606a"/>`);
    out.push(`<line x1="${ox + M.left}" x2="${ox + M.left}" y1="${oy + M.top}" y2="${oy + M.top + ph}" stroke="#57606a"/>`);
    out.push(`<text x="${ox + M.left + pw / 2}" y="${oy + H - 12}" text-anchor="middle">${esc(spec.xLabel)}${logX ? ' (log scale)' : ''}</text>`);
    out.push(`<text transform="translate(${ox + 14},${oy + M.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(panel.yLabel)}</text>`);
    panel.series.forEach((s, si) => {
      const color = COLORS[si % COLORS.length];
      const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).sort((a, b) => a[0] - b[0]);
      if (pts.length > 1)
        out.push(
          `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}"/>`,
        );
      for (const [x, y] of pts)
        out.push(
          `<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${color}"><title>${esc(s.name)}: ${formatNumber(x)} → ${formatNumber(y)}</title></circle>`,
        );
      const ly = oy + M.top + 4 + si * 14;
      out.push(
        `<rect x="${ox + M.left + 8}" y="${ly}" width="10" height="3" fill="${color}"/><text x="${ox + M.left + 22}" y="${ly + 4}">${esc(s.name)}</text>`,
      );
    });
    out.push('</g>');
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
