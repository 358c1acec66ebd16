// The SVG seat map, sections first: the whole venue shows its sections
// coloured by price; seats are drawn only for the sections in view once
// zoomed in, so a 20,000-seat stadium is live at once. Touch: tap a section
// to open it (seats at least 24 px), pinch or double-tap to zoom around the
// finger, one finger pans. Mouse: wheel zooms around the pointer, drag pans.
// Keyboard: arrows pan, + and - zoom; seats themselves are picked from the
// section → row → seat lists beside the map (book.js). Zoomed in far enough
// to tap seats, each seat shows its number and each row its label.
import { h, s } from './dom.js';

export const PALETTE = ['#1f6feb', '#8250df', '#bf3989', '#1a7f37', '#bc4c00', '#0a7ea4', '#6e7781'];

const SEAT_R = 2.4; // seat pitch is 5 units
const FINGER_PX = 26; // an opened section shows seats at least 24 px, with room to spare
const MOUSE_PX = 14; // with a mouse, an opened section fits the map down to this
const TAP_PX = 12; // smaller seats are not tapped: the tap opens their section
const MAX_SEAT_PX = 64;
const LABEL_PX = 16; // seats this big show their numbers, rows their labels

export class SeatMap {
  constructor(layout, levels, { onToggle, onHover = () => {}, onOpen = () => {}, onCounts = () => {} }) {
    this.layout = layout;
    this.color = {};
    levels.forEach((p, i) => (this.color[p.code] = p.color || PALETTE[i % PALETTE.length]));
    this.seats = []; // by index: {id, index, label, level, section, row, number, x, y, el}
    this.sections = {}; // by code: {sec, seats: [index], box, drawn, label, poly}
    this.available = new Uint8Array(0);
    this.selected = new Set();
    this.pending = new Set(); // seats of a hold in flight: their live updates are ours
    this.mine = new Set(); // seats of the fan's own unpaid holds
    this.onToggle = onToggle;
    this.onHover = onHover;
    this.onOpen = onOpen;
    this.onCounts = onCounts;
    for (const sec of layout.sections) {
      const rec = { sec, seats: [], box: sec.shape ? bounds(sec.shape) : null, drawn: false };
      this.sections[sec.code] = rec;
      for (const row of sec.rows || []) {
        for (const [id, index, number, x, y] of row.seats) {
          rec.seats.push(index);
          this.seats[index] = { id, index, number, x, y, el: null, level: sec.price_level, section: sec.code, row: row.label,
            label: `${sec.name} · Row ${row.label} · Seat ${number}` };
        }
      }
    }
    this.full = { x: 0, y: 0, w: layout.width, h: layout.height };
    this.view = { ...this.full };
    this.el = this.draw();
  }

  draw() {
    const svg = s('svg', { viewBox: this.box(), role: 'img', class: 'seatmap', tabindex: '0',
      'aria-label': `Seat map of ${this.layout.name}, by section. Tap or click a section to see its seats. Arrow keys pan, plus and minus zoom. The lists beside the map pick the same seats by section, row and number.` });
    if (this.layout.stage) {
      svg.append(s('polygon', { points: this.layout.stage.map((p) => p.join(',')).join(' '), class: 'stage' }));
    }
    const areas = s('g');
    this.seatLayer = s('g');
    this.labels = s('g', { class: 'labels' });
    for (const rec of Object.values(this.sections)) {
      const sec = rec.sec;
      if (!sec.shape) continue;
      const g = s('g', { 'data-section': sec.code });
      rec.poly = s('polygon', { points: sec.shape.map((p) => p.join(',')).join(' '), class: 'section ' + sec.kind,
        fill: this.color[sec.price_level] || '#999' });
      g.append(rec.poly);
      areas.append(g);
      const [x, y] = center(sec.shape);
      rec.label = s('text', { x, y, class: 'section-label' });
      rec.label.textContent = sec.kind === 'standing' ? sec.name : sec.code;
      this.labels.append(rec.label);
    }
    if (this.layout.stage) {
      const [x, y] = center(this.layout.stage);
      const t = s('text', { x, y, class: 'section-label' });
      t.textContent = 'STAGE';
      this.labels.append(t);
    }
    svg.append(areas, this.seatLayer, this.labels);
    svg.addEventListener('pointerover', (e) => {
      const t = this.hit(e.target);
      if (t) this.onHover(t.seat, this.sections[t.code]);
    });
    this.gestures(svg);
    return svg;
  }

  // hit names the seat and section under an event target.
  hit(target) {
    const i = target.dataset && target.dataset.i;
    const g = target.closest && target.closest('g[data-section]');
    if (!g) return null;
    return { seat: i !== undefined ? this.seats[Number(i)] : null, code: g.dataset.section };
  }

  box() {
    const v = this.view;
    return `${v.x} ${v.y} ${v.w} ${v.h}`;
  }

  rect() {
    const r = this.el.getBoundingClientRect();
    return r.width ? r : { left: 0, top: 0, width: this.full.w, height: this.full.h };
  }

  // seatPx is how big a seat is on screen now.
  seatPx() {
    return (2 * SEAT_R * this.rect().width) / this.view.w;
  }

  setView(v) {
    const r = this.rect();
    const aspect = r.height / r.width;
    const fit = Math.max(this.full.w, this.full.h / aspect);
    const w = Math.min(Math.max(v.w, (2 * SEAT_R * r.width) / MAX_SEAT_PX), fit * 1.2);
    const hgt = w * aspect;
    // keep the centre over the venue, so the map never pans into nothing
    const cx = Math.min(Math.max(v.x + v.w / 2, this.full.x), this.full.x + this.full.w);
    const cy = Math.min(Math.max(v.y + (v.h ?? v.w * aspect) / 2, this.full.y), this.full.y + this.full.h);
    this.view = { x: cx - w / 2, y: cy - hgt / 2, w, h: hgt };
    this.el.setAttribute('viewBox', this.box());
    const scale = r.width / w;
    this.labels.style.fontSize = `${12 / scale}px`;
    const px = this.seatPx();
    this.el.classList.toggle('zoomed', px >= 4);
    this.el.classList.toggle('near', px >= LABEL_PX); // rows and seat numbers readable
    if (px >= 4) this.drawSeatsInView();
  }

  // zoomAt scales the view by f keeping the point under (clientX, clientY) still.
  zoomAt(f, clientX, clientY) {
    const r = this.rect();
    const v = this.view;
    const fx = (clientX - r.left) / r.width;
    const fy = (clientY - r.top) / r.height;
    const ux = v.x + fx * v.w;
    const uy = v.y + fy * v.h;
    this.setView({ x: ux - fx * v.w * f, y: uy - fy * v.h * f, w: v.w * f, h: v.h * f });
  }

  zoom(f) {
    const r = this.rect();
    this.zoomAt(f, r.left + r.width / 2, r.top + r.height / 2);
  }

  pan(dx, dy) {
    const v = this.view;
    this.setView({ ...v, x: v.x + dx * v.w, y: v.y + dy * v.h });
  }

  reset() {
    const r = this.rect();
    const aspect = r.height / r.width;
    const w = Math.max(this.full.w, this.full.h / aspect) * 1.02;
    this.setView({ x: this.full.x + this.full.w / 2 - w / 2, y: this.full.y + this.full.h / 2 - (w * aspect) / 2, w, h: w * aspect });
  }

  // open zooms into a section so its rows fill the map and seats are big
  // enough for a finger.
  open(code, { quiet = false } = {}) {
    const rec = this.sections[code];
    if (!rec || !rec.box) return;
    const r = this.rect();
    const aspect = r.height / r.width;
    const b = rec.box;
    let w = Math.max(b.w, b.h / aspect) * 1.1;
    w = Math.min(w, (2 * SEAT_R * r.width) / aimPx());
    this.setView({ x: b.x + b.w / 2 - w / 2, y: b.y + b.h / 2 - (w * aspect) / 2, w, h: w * aspect });
    if (quiet) return;
    this.el.scrollIntoView({ block: 'nearest' }); // on a phone the map may sit half below the fold
    this.onOpen(code);
  }

  // show centres the map on some seats, zoomed in enough to tap them.
  show(seats) {
    if (!seats.length) return;
    const r = this.rect();
    const aspect = r.height / r.width;
    const xs = seats.map((t) => t.x);
    const ys = seats.map((t) => t.y);
    const cx = (Math.min(...xs) + Math.max(...xs)) / 2;
    const cy = (Math.min(...ys) + Math.max(...ys)) / 2;
    const w = (2 * SEAT_R * r.width) / aimPx();
    this.setView({ x: cx - w / 2, y: cy - (w * aspect) / 2, w, h: w * aspect });
  }

  drawSeatsInView() {
    const v = this.view;
    for (const rec of Object.values(this.sections)) {
      const b = rec.box;
      if (rec.drawn || !b || !rec.seats.length) continue;
      if (b.x > v.x + v.w || b.x + b.w < v.x || b.y > v.y + v.h || b.y + b.h < v.y) continue;
      this.drawSeats(rec);
    }
  }

  drawSeats(rec) {
    rec.drawn = true;
    const g = s('g', { 'data-section': rec.sec.code });
    const fill = this.color[rec.sec.price_level] || '#999';
    const rows = new Map(); // row label → its seats, in number order
    for (const i of rec.seats) {
      const seat = this.seats[i];
      seat.el = s('circle', { cx: seat.x, cy: seat.y, r: SEAT_R, class: 'seat', 'data-i': i, fill });
      if (!this.isAvailable(i)) seat.el.classList.add('taken');
      if (this.selected.has(i)) seat.el.classList.add('selected');
      if (this.mine.has(i)) seat.el.classList.add('mine');
      // The number sits on its seat, right after it, so the seat's state
      // (a CSS sibling rule) picks a readable colour for it.
      const n = s('text', { x: seat.x, y: seat.y, class: 'seat-number', 'font-size': String(seat.number).length > 2 ? 1.8 : 2.4 });
      n.textContent = seat.number;
      g.append(seat.el, n);
      if (!rows.has(seat.row)) rows.set(seat.row, []);
      rows.get(seat.row).push(seat);
    }
    // Each row's label at both of its ends, out along the row: a corner
    // section's rows run diagonally, and the label shows which way.
    for (const [label, seats] of rows) {
      seats.sort((a, b) => a.number - b.number);
      for (const [end, next] of [[seats[0], seats[1]], [seats.at(-1), seats.at(-2)]]) {
        const [dx, dy] = next ? [end.x - next.x, end.y - next.y] : [-1, 0];
        const k = (2.6 * SEAT_R) / (Math.hypot(dx, dy) || 1);
        const t = s('text', { x: end.x + dx * k, y: end.y + dy * k, class: 'row-label' });
        t.textContent = label;
        g.append(t);
      }
    }
    this.seatLayer.append(g);
  }

  gestures(svg) {
    const pts = new Map();
    let g = null; // the gesture under way
    let lastTap = null;
    const dist = () => {
      const [a, b] = [...pts.values()];
      return Math.hypot(a.x - b.x, a.y - b.y);
    };
    const mid = () => {
      const [a, b] = [...pts.values()];
      return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
    };
    svg.addEventListener('pointerdown', (e) => {
      if (e.button > 0) return;
      svg.setPointerCapture(e.pointerId); // keep panning when the finger leaves the map
      pts.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (pts.size === 1) g = { kind: 'tap', x: e.clientX, y: e.clientY, target: e.target, view: { ...this.view } };
      else if (pts.size === 2) g = { kind: 'pinch', d: dist(), m: mid(), view: { ...this.view } };
    });
    svg.addEventListener('pointermove', (e) => {
      if (!pts.has(e.pointerId) || !g) return;
      pts.set(e.pointerId, { x: e.clientX, y: e.clientY });
      const r = this.rect();
      if (g.kind === 'tap' && Math.hypot(e.clientX - g.x, e.clientY - g.y) > 8) g.kind = 'pan';
      if (g.kind === 'pan') {
        const k = g.view.w / r.width;
        this.setView({ ...g.view, x: g.view.x - (e.clientX - g.x) * k, y: g.view.y - (e.clientY - g.y) * k });
      } else if (g.kind === 'pinch' && pts.size === 2) {
        const f = g.d / Math.max(dist(), 1);
        const m = mid();
        const k0 = g.view.w / r.width;
        const ux = g.view.x + (g.m.x - r.left) * k0;
        const uy = g.view.y + (g.m.y - r.top) * k0;
        const w = g.view.w * f;
        const k = w / r.width;
        this.setView({ x: ux - (m.x - r.left) * k, y: uy - (m.y - r.top) * k, w, h: g.view.h * f });
      }
    });
    const end = (e) => {
      if (!pts.delete(e.pointerId)) return;
      if (g && g.kind === 'tap' && e.type === 'pointerup') {
        // The event's own time, not when this handler runs: on a busy
        // phone two quick taps may be handled far apart.
        const now = e.timeStamp;
        const double = lastTap && now - lastTap.t < 350 && Math.hypot(e.clientX - lastTap.x, e.clientY - lastTap.y) < 30;
        lastTap = double ? null : { t: now, x: e.clientX, y: e.clientY };
        this.tap(g.target, e.clientX, e.clientY, double);
      }
      g = null; // a pinch ends when either finger lifts
    };
    svg.addEventListener('pointerup', end);
    svg.addEventListener('pointercancel', end);
    svg.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.zoomAt(e.deltaY > 0 ? 1.25 : 0.8, e.clientX, e.clientY);
    }, { passive: false });
    svg.addEventListener('keydown', (e) => {
      const k = { ArrowLeft: [-0.1, 0], ArrowRight: [0.1, 0], ArrowUp: [0, -0.1], ArrowDown: [0, 0.1] }[e.key];
      if (k) this.pan(...k);
      else if (e.key === '+' || e.key === '=') this.zoom(0.7);
      else if (e.key === '-') this.zoom(1.4);
      else return;
      e.preventDefault();
    });
  }

  // tap: a seat big enough to aim at toggles; anything else smaller than a
  // finger opens its section; a double tap zooms in around the finger.
  tap(target, x, y, double) {
    const t = this.hit(target);
    const px = this.seatPx();
    if (t && t.seat && px >= TAP_PX) return this.toggle(t.seat.index);
    if (double) return this.zoomAt(0.5, x, y);
    if (t && px < aimPx() * 0.9 && this.sections[t.code].seats.length) this.open(t.code);
  }

  controls() {
    return h('div', { class: 'map-controls' },
      h('button', { type: 'button', onclick: () => this.zoom(0.6), 'aria-label': 'Zoom in' }, '+'),
      h('button', { type: 'button', onclick: () => this.zoom(1 / 0.6), 'aria-label': 'Zoom out' }, '−'),
      h('button', { type: 'button', onclick: () => this.reset() }, 'Whole venue'));
  }

  isAvailable(i) {
    return this.available[i] === 1;
  }

  // free counts the available seats of a section.
  free(code) {
    let n = 0;
    for (const i of this.sections[code].seats) n += this.available[i];
    return n;
  }

  // applySnapshot reads the base64 bitset (LSB first, 1 = available).
  applySnapshot(b64, count) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const next = new Uint8Array(count);
    for (let i = 0; i < count; i++) next[i] = (bytes[i >> 3] >> (i & 7)) & 1;
    const lost = [];
    for (let i = 0; i < count; i++) {
      if (next[i] !== this.available[i]) this.paint(i, next[i]);
      if (!next[i] && this.selected.has(i) && !this.pending.has(i)) lost.push(i);
    }
    this.available = next;
    this.counted();
    return this.drop(lost);
  }

  // applyDelta applies one live change; it returns seats lost from the
  // selection (never those of the fan's own hold in flight).
  applyDelta(d) {
    const state = d.state === 'available' ? 1 : 0;
    const lost = [];
    for (const i of d.seats || []) {
      if (i >= this.available.length) continue;
      this.available[i] = state;
      this.paint(i, state);
      if (!state && this.selected.has(i) && !this.pending.has(i)) lost.push(i);
    }
    this.counted();
    return this.drop(lost);
  }

  // markTaken marks seats (by id) another fan got; it returns those that
  // were in the selection.
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
    this.counted();
    return this.drop(lost);
  }

  // counted tells the page section counts changed, once per frame.
  counted() {
    if (this.countQueued) return;
    this.countQueued = true;
    requestAnimationFrame(() => {
      this.countQueued = false;
      for (const rec of Object.values(this.sections)) {
        if (rec.poly && rec.seats.length) rec.poly.classList.toggle('soldout', this.free(rec.sec.code) === 0);
      }
      this.onCounts();
    });
  }

  drop(lost) {
    for (const i of lost) {
      this.selected.delete(i);
      if (this.seats[i].el) this.seats[i].el.classList.remove('selected');
    }
    if (lost.length) this.onToggle();
    return lost.map((i) => this.seats[i]);
  }

  paint(i, avail) {
    const seat = this.seats[i];
    if (seat && seat.el) seat.el.classList.toggle('taken', !avail);
  }

  // tell answers a tap on a seat that cannot be chosen where the finger
  // is, for a moment, and in the line under the map.
  tell(seat, text) {
    if (this.note) this.note.remove();
    clearTimeout(this.noteTimer);
    this.note = s('text', { x: seat.x, y: seat.y - 2.5 * SEAT_R, class: 'seat-note' });
    this.note.textContent = text;
    this.labels.append(this.note);
    this.noteTimer = setTimeout(() => this.note.remove(), 2500);
    this.onHover(seat, this.sections[seat.section]);
  }

  // setMine marks the seats (by index) of the fan's own holds.
  setMine(indexes) {
    const next = new Set(indexes);
    for (const i of new Set([...this.mine, ...next])) {
      const el = this.seats[i] && this.seats[i].el;
      if (el) el.classList.toggle('mine', next.has(i));
    }
    this.mine = next;
  }

  toggle(i) {
    const seat = this.seats[i];
    if (!seat) return;
    if (this.selected.has(i)) {
      this.selected.delete(i);
    } else if (this.isAvailable(i)) {
      this.selected.add(i);
    } else {
      this.tell(seat, this.mine.has(i) ? 'Held by you' : 'Taken');
      return;
    }
    if (seat.el) seat.el.classList.toggle('selected', this.selected.has(i));
    this.onToggle(seat);
  }

  selection() {
    return [...this.selected].map((i) => this.seats[i]);
  }
}

// aimPx is the smallest seat the fan can hit: a fingertip on touch screens.
const aimPx = () => (matchMedia('(pointer: coarse)').matches ? FINGER_PX : MOUSE_PX);

function bounds(shape) {
  const xs = shape.map((p) => p[0]);
  const ys = shape.map((p) => p[1]);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, w: Math.max(...xs) - x, h: Math.max(...ys) - y };
}

function center(shape) {
  const n = shape.length;
  return [shape.reduce((a, p) => a + p[0], 0) / n, shape.reduce((a, p) => a + p[1], 0) / n];
}
