// Small inline-SVG plots for the control room: lines over time, and
// stacked bars. No library: a few dozen points redrawn once a second.
// Each plot is a figure whose caption names it and whose SVG carries a
// text summary (its latest values) for screen readers.
import { h, s } from '../dom.js';

// Colours with at least 3:1 contrast on white, told apart by dash too.
export const COLORS = ['#0b5cd5', '#a40e26', '#116329', '#8250df', '#9a6700'];
const DASH = ['', '6 3', '2 3', '8 3 2 3', ''];

const W = 320;
const H = 120;
const PAD = { l: 40, r: 8, t: 8, b: 20 };

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= v);
}

// short writes a number compactly (1.2k, 3.4M).
export function short(v) {
  if (v === null || v === undefined) return '–';
  const a = Math.abs(v);
  if (a >= 1e6) return (v / 1e6).toFixed(a >= 1e7 ? 0 : 1) + 'M';
  if (a >= 1e3) return (v / 1e3).toFixed(a >= 1e4 ? 0 : 1) + 'k';
  return String(Math.round(v * 10) / 10);
}

// lines draws series over time: series is [{label, values}], values oldest
// first, one per step (null: no sample); format writes a value, axis a
// value on the axis (narrow: its room is PAD.l); note says what the lines
// alone do not (else whether two of them coincide).
export function lines({ title, series, step, format = short, axis = short, id, note = '' }) {
  const n = Math.max(...series.map((x) => x.values.length), 2);
  const all = series.flatMap((x) => x.values).filter((v) => v !== null && v !== undefined);
  const top = niceMax(Math.max(0, ...all));
  const x = (i) => PAD.l + (i * (W - PAD.l - PAD.r)) / (n - 1);
  const y = (v) => H - PAD.b - (v / top) * (H - PAD.t - PAD.b);
  const latest = (x) => [...x.values].reverse().find((v) => v !== null && v !== undefined);
  const summary = series.map((x) => `${x.label}: ${format(latest(x) ?? null)}`).join('; ');
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', role: 'img', 'aria-label': `${title}, last ${Math.round((n * step) / 60)} minutes. Now ${summary}.` });
  svg.append(
    s('line', { x1: PAD.l, x2: W - PAD.r, y1: y(0), y2: y(0), class: 'axis' }),
    s('line', { x1: PAD.l, x2: W - PAD.r, y1: y(top), y2: y(top), class: 'grid' }),
    text(PAD.l - 4, y(top) + 4, axis(top), 'end'),
    text(PAD.l - 4, y(0), '0', 'end'),
    text(PAD.l, H - 4, `−${Math.round((n * step) / 60)} min`, 'start'),
    text(W - PAD.r, H - 4, 'now', 'end'));
  series.forEach((ser, k) => {
    let d = '';
    let pen = false;
    ser.values.forEach((v, i) => {
      if (v === null || v === undefined) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
      pen = true;
    });
    if (d) {
      svg.append(s('path', { d, class: 'line', stroke: COLORS[k % COLORS.length], 'stroke-dasharray': DASH[k % DASH.length] }));
    }
    // A dot on the latest value: a single sample shows too.
    const i = ser.values.length - 1 - [...ser.values].reverse().findIndex((v) => v !== null && v !== undefined);
    if (i < ser.values.length) svg.append(s('circle', { cx: x(i), cy: y(ser.values[i]), r: 2.5, fill: COLORS[k % COLORS.length] }));
  });
  return figure(title, svg, series.map((ser, k) => [ser.label, format(latest(ser) ?? null), k]), id, [note || overlap(series)]);
}

// overlap says which series are drawn one over the other (equal at every
// sample, some not zero): only the last drawn would show.
function overlap(series) {
  const key = (x) => JSON.stringify(x.values);
  const same = series.filter((x, i) => x.values.some((v) => v) && series.some((y, j) => j !== i && key(y) === key(x)));
  return same.length ? `${same.map((x) => x.label).join(' and ')} are equal: their lines coincide.` : '';
}

// bars draws one stacked bar per row: rows are [{label, parts: [n, ...]}],
// parts in the order of names.
export function bars({ title, names, rows, id }) {
  const rowH = 14;
  const height = rows.length * rowH + 4;
  const labelW = 48;
  const svg = s('svg', { viewBox: `0 0 ${W} ${height}`, class: 'plot bars', role: 'img',
    'aria-label': `${title}. ` + rows.map((r) => `${r.label}: ` + names.map((n, i) => `${r.parts[i]} ${n}`).join(', ')).join('; ') + '.' });
  rows.forEach((r, j) => {
    const total = r.parts.reduce((a, b) => a + b, 0) || 1;
    let at = labelW;
    const yy = j * rowH + 2;
    svg.append(text(labelW - 4, yy + rowH / 2 + 4, r.label, 'end'));
    r.parts.forEach((p, i) => {
      const w = (p / total) * (W - labelW - PAD.r);
      if (w > 0) svg.append(s('rect', { x: at, y: yy, width: w, height: rowH - 4, fill: STATE_COLORS[i % STATE_COLORS.length] }));
      at += w;
    });
  });
  return figure(title, svg, names.map((n, i) => [n, short(rows.reduce((a, r) => a + r.parts[i], 0)), i, STATE_COLORS]), id);
}

// Sold, held, available: the seat map uses the same colours.
export const STATE_COLORS = ['#a40e26', '#9a6700', '#116329'];

function figure(title, svg, legend, id, notes = []) {
  return h('figure', { class: 'plot-card', id },
    h('figcaption', {}, title),
    svg,
    h('ul', { class: 'legend small' }, legend.map(([label, value, k, palette = COLORS]) =>
      h('li', {}, h('span', { class: 'swatch', style: { background: palette[k % palette.length] } }), `${label} `, h('strong', {}, value)))),
    notes.filter(Boolean).map((t) => h('p', { class: 'small muted plot-note' }, t)));
}

function text(x, y, t, anchor) {
  const el = s('text', { x, y, 'text-anchor': anchor, class: 'tick' });
  el.textContent = t;
  return el;
}
