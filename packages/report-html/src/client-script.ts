/* The script inlined into the report. It runs in the browser, so it uses nothing from this module's scope: it is
   serialised with Function.prototype.toString and called with the page's uPlot constructor. */

interface ChartTick {
  readonly seq: number;
  readonly scope: string;
  readonly passed: number | null;
  readonly failed: number | null;
  readonly divergences: number;
  readonly uncoveredObligations: number | null;
  readonly blocking: number;
  readonly parked: number;
  readonly usd: number | null;
}

interface ChartData {
  readonly ticks: readonly ChartTick[];
  readonly warnings: readonly { readonly seq: number | null; readonly kind: string }[];
  readonly verify: {
    readonly climbing: boolean;
    readonly baseline: { readonly exitCode: number | null; readonly score: number | null } | null;
    readonly ticks: readonly {
      readonly tick: number;
      readonly exitCode: number | null;
      readonly score: number | null;
      readonly kept: boolean | null;
    }[];
  } | null;
}

/* Only the parts of uPlot's API the script uses. */
interface PlotApi {
  readonly ctx: CanvasRenderingContext2D;
  readonly bbox: {
    readonly left: number;
    readonly top: number;
    readonly width: number;
    readonly height: number;
  };
  readonly data: readonly (readonly (number | null)[])[];
  valToPos(value: number, scale: string, canvasPixels: boolean): number;
  setSize(size: { width: number; height: number }): void;
}
type PlotCtor = new (options: unknown, data: unknown, target: HTMLElement) => PlotApi;

/**
 * Draws the report's charts from the JSON in `#report-data` and exposes them as `window.alliumReport.charts`.
 * Without JavaScript nothing runs and the tables carry the same numbers.
 */
export function drawCharts(uPlot: PlotCtor): void {
  const source = document.getElementById('report-data');
  if (source === null || source.textContent === null) return;
  const data = JSON.parse(source.textContent) as ChartData;
  const charts: Record<string, PlotApi> = {};
  const width = (el: HTMLElement) => Math.max(320, Math.min(1060, el.clientWidth || 900));
  const height = 320;
  const dash = [6, 4];
  const marker = (u: PlotApi, x: number, color: string, label: string) => {
    const pos = u.valToPos(x, 'x', true);
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.setLineDash(dash);
    ctx.lineWidth = 2 * devicePixelRatio;
    ctx.beginPath();
    ctx.moveTo(pos, u.bbox.top);
    ctx.lineTo(pos, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.font = `${String(11 * devicePixelRatio)}px system-ui, sans-serif`;
    ctx.fillText(label, pos + 4 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
    ctx.restore();
  };
  const conv = document.getElementById('chart-convergence');
  if (conv !== null && data.ticks.length > 0) {
    const ticks = data.ticks;
    const series: Record<string, unknown>[] = [
      {},
      { label: 'tests passing', stroke: '#009E73', width: 2, points: { size: 8 } },
      { label: 'tests failing', stroke: '#D55E00', width: 2, points: { size: 8 } },
      { label: 'weed divergences', stroke: '#E69F00', width: 2, dash: [8, 4], points: { size: 7 } },
      { label: 'blocking questions', stroke: '#0072B2', width: 2, points: { size: 7 } },
      { label: 'parked questions', stroke: '#56B4E9', width: 2, dash: [2, 3], points: { size: 7 } },
      {
        label: 'spend (USD)',
        stroke: '#444444',
        width: 1.5,
        dash: [3, 3],
        scale: 'usd',
        points: { size: 5 },
      },
    ];
    const columns: (number | null)[][] = [
      ticks.map((t) => t.seq),
      ticks.map((t) => t.passed),
      ticks.map((t) => t.failed),
      ticks.map((t) => t.divergences),
      ticks.map((t) => t.blocking),
      ticks.map((t) => t.parked),
      ticks.map((t) => t.usd),
    ];
    if (ticks.some((t) => t.uncoveredObligations !== null)) {
      series.push({ label: 'uncovered obligations', stroke: '#CC79A7', width: 2, points: { size: 7 } });
      columns.push(ticks.map((t) => t.uncoveredObligations));
    }
    const options = {
      width: width(conv),
      height,
      legend: { live: false },
      scales: { x: { time: false }, usd: { auto: true } },
      axes: [
        {
          label: 'tick (whole run, in order)',
          values: (_u: unknown, vals: number[]) => vals.map((v) => (Number.isInteger(v) ? String(v) : '')),
        },
        { label: 'count' },
        {
          side: 1,
          scale: 'usd',
          label: 'USD',
          grid: { show: false },
          values: (_u: unknown, vals: number[]) => vals.map((v) => `$${v.toFixed(2)}`),
        },
      ],
      series,
      hooks: {
        draw: [
          (u: PlotApi) => {
            ticks.forEach((t, i) => {
              const previous = ticks[i - 1];
              if (previous !== undefined && previous.scope !== t.scope)
                marker(u, t.seq - 0.5, '#8a8a8a', t.scope);
            });
            const first = ticks[0];
            if (first !== undefined) {
              u.ctx.save();
              u.ctx.fillStyle = '#595959';
              u.ctx.font = `${String(11 * devicePixelRatio)}px system-ui, sans-serif`;
              u.ctx.fillText(
                first.scope,
                u.bbox.left + 4 * devicePixelRatio,
                u.bbox.top + 12 * devicePixelRatio,
              );
              u.ctx.restore();
            }
            for (const w of data.warnings) {
              if (w.seq !== null) marker(u, w.seq, w.kind === 'stall' ? '#B8560B' : '#7A1F1F', `⚠ ${w.kind}`);
            }
          },
        ],
      },
    };
    conv.textContent = '';
    charts['convergence'] = new uPlot(options, columns, conv);
  }
  const ver = document.getElementById('chart-verify');
  const verify = data.verify;
  if (ver !== null && verify !== null && verify.ticks.length > 0) {
    const rows = [
      ...(verify.baseline === null
        ? []
        : [{ tick: 0, exitCode: verify.baseline.exitCode, score: verify.baseline.score, kept: true }]),
      ...verify.ticks,
    ];
    const pointsOnly = () => null;
    const series: Record<string, unknown>[] = [
      {},
      { label: 'exit code', stroke: '#0072B2', width: 2, points: { size: 7 } },
    ];
    const columns: (number | null)[][] = [rows.map((r) => r.tick), rows.map((r) => r.exitCode)];
    if (verify.climbing) {
      series.push(
        {
          label: 'score (kept)',
          stroke: '#009E73',
          scale: 'score',
          paths: pointsOnly,
          points: { show: true, size: 10, fill: '#009E73' },
        },
        {
          label: 'score (reverted)',
          stroke: '#D55E00',
          scale: 'score',
          paths: pointsOnly,
          points: { show: true, size: 10, fill: '#ffffff' },
        },
      );
      columns.push(
        rows.map((r) => (r.kept === false ? null : r.score)),
        rows.map((r) => (r.kept === false ? r.score : null)),
      );
    }
    const options = {
      width: width(ver),
      height: 280,
      legend: { live: false },
      scales: { x: { time: false } },
      axes: [
        { label: 'tick' },
        { label: 'exit code' },
        ...(verify.climbing ? [{ side: 1, scale: 'score', label: 'score', grid: { show: false } }] : []),
      ],
      series,
    };
    ver.textContent = '';
    charts['verify'] = new uPlot(options, columns, ver);
  }
  const resize = (print: boolean) => {
    for (const [id, chart] of Object.entries(charts)) {
      const el = document.getElementById(`chart-${id}`);
      if (el !== null)
        chart.setSize({ width: print ? 680 : width(el), height: id === 'verify' ? 280 : height });
    }
  };
  addEventListener('beforeprint', () => resize(true));
  addEventListener('afterprint', () => resize(false));
  addEventListener('resize', () => resize(false));
  (window as unknown as { alliumReport: unknown }).alliumReport = { charts };
}
