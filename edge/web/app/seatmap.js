// The SVG seat map: sections and seats drawn from the venue layout, colored
// by price level, with zoom and pan (wheel, drag, buttons, arrow keys) and
// availability applied from the snapshot bitset and live deltas.
import { h, s } from './dom.js';

export const PALETTE = ['#1f6feb', '#8250df', '#bf3989', '#1a7f37', '#bc4c00', '#0a7ea4', '#6e7781'];

export class SeatMap {
  constructor(layout, levels, { onToggle, onHover }) {
    this.layout = layout;
    this.color = {};
    levels.forEach((p, i) => (this.color[p.code] = PALETTE[i % PALETTE.length]));
    this.seats = []; // by index: {id, index, label, level, section, el}
    this.available = new Uint8Array(0);
    this.selected = new Set();
    this.onToggle = onToggle;
    this.onHover = onHover;
    this.full = { x: 0, y: 0, w: layout.width, h: layout.height };
    this.view = { ...this.full };
    this.el = this.draw();
  }

  draw() {
    const svg = s('svg', { viewBox: this.box(), role: 'img', class: 'seatmap', tabindex: '0',
      'aria-label': `Seat map of ${this.layout.name}. Click a seat to select it; use the buttons or arrow keys to zoom and pan. Best available and standing tickets can be chosen with the form beside the map.` });
    if (this.layout.stage) {
      svg.append(s('polygon', { points: this.layout.stage.map((p) => p.join(',')).join(' '), class: 'stage' }));
      const [x, y] = center(this.layout.stage);
      const t = s('text', { x, y, class: 'stage-label' });
      t.textContent = 'STAGE';
      svg.append(t);
    }
    for (const sec of this.layout.sections) {
      const g = s('g', { 'data-section': sec.code });
      if (sec.shape) {
        const poly = s('polygon', { points: sec.shape.map((p) => p.join(',')).join(' '), class: 'section ' + sec.kind,
          fill: this.color[sec.price_level] || '#999' });
        poly.addEventListener('click', () => this.zoomTo(sec.shape));
        g.append(poly);
        const [x, y] = center(sec.shape);
        const t = s('text', { x, y, class: 'section-label' });
        t.textContent = sec.kind === 'standing' ? sec.name : sec.code;
        g.append(t);
      }
      for (const row of sec.rows || []) {
        for (const [id, index, number, x, y] of row.seats) {
          const el = s('circle', { cx: x, cy: y, r: 2.3, class: 'seat', 'data-i': index, fill: this.color[sec.price_level] || '#999' });
          this.seats[index] = { id, index, el, level: sec.price_level, section: sec.code,
            label: `${sec.name} · Row ${row.label} · Seat ${number}` };
          g.append(el);
        }
      }
      svg.append(g);
    }
    svg.addEventListener('click', (e) => {
      const i = e.target.dataset && e.target.dataset.i;
      if (i !== undefined) this.toggle(Number(i));
    });
    svg.addEventListener('pointerover', (e) => {
      const i = e.target.dataset && e.target.dataset.i;
      if (i !== undefined) this.onHover(this.seats[Number(i)], this.isAvailable(Number(i)));
    });
    this.panZoom(svg);
    return svg;
  }

  box() {
    const v = this.view;
    return `${v.x} ${v.y} ${v.w} ${v.h}`;
  }

  setView(v) {
    const w = Math.min(Math.max(v.w, 60), this.full.w * 1.2);
    const hgt = (w * this.full.h) / this.full.w;
    this.view = { x: v.x + (v.w - w) / 2, y: v.y + (v.h - hgt) / 2, w, h: hgt };
    this.el.setAttribute('viewBox', this.box());
    this.el.classList.toggle('zoomed', w < this.full.w / 2.5);
  }

  zoom(f) {
    const v = this.view;
    this.setView({ x: v.x, y: v.y, w: v.w * f, h: v.h * f });
  }

  pan(dx, dy) {
    const v = this.view;
    this.setView({ ...v, x: v.x + dx * v.w, y: v.y + dy * v.h });
  }

  reset() {
    this.setView({ ...this.full });
  }

  zoomTo(shape) {
    const xs = shape.map((p) => p[0]);
    const ys = shape.map((p) => p[1]);
    const w = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)) * 1.4;
    const [cx, cy] = center(shape);
    this.setView({ x: cx - w / 2, y: cy - w / 2, w, h: w });
  }

  panZoom(svg) {
    let drag = null;
    svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.zoom(e.deltaY > 0 ? 1.25 : 0.8);
    }, { passive: false });
    svg.addEventListener('pointerdown', (e) => (drag = { x: e.clientX, y: e.clientY, moved: false }));
    svg.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const r = svg.getBoundingClientRect();
      const dx = (drag.x - e.clientX) / r.width;
      const dy = (drag.y - e.clientY) / r.height;
      if (Math.abs(dx) + Math.abs(dy) > 0.01) {
        drag = { x: e.clientX, y: e.clientY, moved: true };
        this.pan(dx, dy);
      }
    });
    svg.addEventListener('pointerup', () => (drag = null));
    svg.addEventListener('pointerleave', () => (drag = null));
    svg.addEventListener('keydown', (e) => {
      const k = { ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, -0.1], ArrowDown: [0, 0.1] }[e.key];
      if (k) this.pan(...k);
      else if (e.key === '+' || e.key === '=') this.zoom(0.8);
      else if (e.key === '-') this.zoom(1.25);
      else return;
      e.preventDefault();
    });
  }

  controls() {
    return h('div', { class: 'map-controls' },
      h('button', { type: 'button', onclick: () => this.zoom(0.7), 'aria-label': 'Zoom in' }, '+'),
      h('button', { type: 'button', onclick: () => this.zoom(1.4), 'aria-label': 'Zoom out' }, '−'),
      h('button', { type: 'button', onclick: () => this.reset() }, 'Whole venue'));
  }

  isAvailable(i) {
    return this.available[i] === 1;
  }

  // applySnapshot reads the base64 bitset (LSB first, 1 = available).
  applySnapshot(b64, count) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const next = new Uint8Array(count);
    for (let i = 0; i < count; i++) next[i] = (bytes[i >> 3] >> (i & 7)) & 1;
    const lost = [];
    for (let i = 0; i < count; i++) {
      if (next[i] !== this.available[i]) this.paint(i, next[i]);
      if (!next[i] && this.selected.has(i)) lost.push(i);
    }
    this.available = next;
    return this.drop(lost);
  }

  // applyDelta applies one live change; it returns seats lost from the selection.
  applyDelta(d) {
    const state = d.state === 'available' ? 1 : 0;
    const lost = [];
    for (const i of d.seats || []) {
      if (i >= this.available.length) continue;
      this.available[i] = state;
      this.paint(i, state);
      if (!state && this.selected.has(i)) lost.push(i);
    }
    return this.drop(lost);
  }

  markTaken(ids) {
    const byId = new Set(ids);
    const lost = [];
    for (const seat of this.seats) {
      if (seat && byId.has(seat.id)) {
        this.available[seat.index] = 0;
        this.paint(seat.index, 0);
        if (this.selected.has(seat.index)) lost.push(seat.index);
      }
    }
    return this.drop(lost);
  }

  drop(lost) {
    for (const i of lost) {
      this.selected.delete(i);
      this.seats[i].el.classList.remove('selected');
    }
    if (lost.length) this.onToggle();
    return lost.map((i) => this.seats[i]);
  }

  paint(i, avail) {
    const seat = this.seats[i];
    if (seat) seat.el.classList.toggle('taken', !avail);
  }

  toggle(i) {
    const seat = this.seats[i];
    if (!seat) return;
    if (this.selected.has(i)) {
      this.selected.delete(i);
      seat.el.classList.remove('selected');
    } else if (this.isAvailable(i)) {
      this.selected.add(i);
      seat.el.classList.add('selected');
    } else {
      return;
    }
    this.onToggle();
  }

  selection() {
    return [...this.selected].map((i) => this.seats[i]);
  }

  clear() {
    this.drop([...this.selected]);
  }
}

function center(shape) {
  const n = shape.length;
  return [shape.reduce((a, p) => a + p[0], 0) / n, shape.reduce((a, p) => a + p[1], 0) / n];
}
