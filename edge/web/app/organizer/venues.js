// The console's venues: import a layout (the API's JSON, or the CSV seat
// list venues hand over), see each bad line beside its error, preview the
// map, save it as a new venue or a venue's next version; list versions.
import { api, when } from '../api.js';
import { field, h, toast } from '../dom.js';
import { navigate } from '../nav.js';
import { SeatMap } from '../seatmap.js';
import { frame, problemText } from './shell.js';

export async function list(main, _params, query) {
  const body = frame(main, 'venues', 'Venues');
  const { venues } = await api('GET', '/api/venues');
  body.append(importForm(venues, query.get('venue') || ''),
    h('h2', {}, 'Your venues'),
    venues.length
      ? h('ul', { class: 'events' }, venues.map((v) => h('li', { class: 'card' },
          h('h3', {}, v.name), h('p', { class: 'muted' }, v.city),
          h('ul', { class: 'versions' }, v.versions.map((x) =>
            h('li', {}, `Version ${x.version}: ${x.seat_count.toLocaleString('en')} seats, ${when(x.created_at)}`))),
          h('p', {}, h('a', { href: `/organizer/venues?venue=${v.id}` }, `Import a new version of ${v.name}`)))))
      : h('p', {}, 'No venues yet: import your first layout above.'));
}

function importForm(venues, chosen) {
  const target = h('select', { id: 'f-venue', name: 'venue' },
    h('option', { value: '' }, 'A new venue'),
    venues.map((v) => h('option', { value: v.id, selected: String(v.id) === chosen }, `${v.name}, next version`)));
  const file = h('input', { id: 'f-file', name: 'file', type: 'file', accept: '.csv,.json,text/csv,application/json', required: true });
  const names = h('div', { class: 'inline' },
    field('Venue name', { name: 'name', autocomplete: 'off' }), field('City', { name: 'city', autocomplete: 'off' }));
  const error = h('div', { role: 'alert' });
  const preview = h('div', { class: 'preview' });
  const check = h('button', { type: 'submit' }, 'Check and preview');
  const form = h('form', { class: 'import', onsubmit: async (e) => {
      e.preventDefault();
      error.replaceChildren();
      preview.replaceChildren();
      check.disabled = true;
      try {
        const send = await request(form, file.files[0]);
        const layout = await send(true);
        showPreview(preview, layout, async (save) => {
          save.disabled = true;
          try {
            const res = await send(false);
            toast(`Saved: ${res.seat_count.toLocaleString('en')} seats, version ${res.version}.`);
            navigate('/organizer/venues', { replace: true });
          } catch (err) {
            save.disabled = false;
            showError(error, err, '');
          }
        });
      } catch (err) {
        showError(error, err, file.files[0] ? await file.files[0].text() : '');
      } finally {
        check.disabled = false;
      }
    } },
    h('h2', {}, 'Import a layout'),
    h('p', { class: 'muted' }, 'A CSV with one seat a line: section, row, seat, x, y, price level (a header line is optional), or the layout JSON of the API.'),
    h('p', { class: 'field' }, h('label', { for: 'f-venue' }, 'Import as'), target),
    names,
    h('p', { class: 'field' }, h('label', { for: 'f-file' }, 'Layout file (CSV or JSON)'), file),
    check, error, preview);
  const sync = () => (names.hidden = target.value !== '');
  target.addEventListener('change', sync);
  sync();
  return form;
}

// request returns a function that sends the chosen file, as a dry run or
// for real.
async function request(form, f) {
  const v = Object.fromEntries(new FormData(form));
  const text = await f.text();
  const csv = !/\.json$/i.test(f.name) && !text.trimStart().startsWith('{');
  const q = new URLSearchParams();
  if (csv && !v.venue) {
    q.set('name', v.name);
    q.set('city', v.city);
  }
  const path = v.venue ? `/api/venues/${v.venue}/layouts` : '/api/venues';
  return (dry) => {
    const params = new URLSearchParams(q);
    if (dry) params.set('dry_run', 'true');
    const url = path + (params.toString() ? '?' + params : '');
    if (csv) return api('POST', url, text, { contentType: 'text/csv' });
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      throw Object.assign(new Error('The file is neither a CSV seat list nor valid JSON.'), { status: 400 });
    }
    return api('POST', url, body);
  };
}

// showError lists every bad line of a CSV beside its text, or every
// mistake of a JSON layout beside where it is (its JSON pointer).
function showError(box, err, text) {
  const lines = (err.body && err.body.errors) || [];
  if (!lines.length) {
    box.append(h('p', { class: 'notice bad' }, problemText(err)));
    return;
  }
  if (!lines.some((l) => l.line)) {
    box.append(
      h('p', { class: 'notice bad' }, `${lines.length === 1 ? 'The layout has a mistake' : `The layout has ${lines.length} mistakes`}: fix ${lines.length === 1 ? 'it' : 'them'} and check again. Nothing was saved.`),
      h('table', { class: 'grid line-errors' },
        h('caption', { class: 'sr-only' }, 'Mistakes in the layout'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Where'), h('th', { scope: 'col' }, 'Mistake'))),
        h('tbody', {}, lines.map((l) => h('tr', { 'data-pointer': l.pointer || '' },
          h('th', { scope: 'row' }, l.pointer ? h('code', {}, l.pointer) : 'The whole layout'),
          h('td', { class: 'error' }, l.detail))))));
    return;
  }
  const source = text.split(/\r?\n/);
  box.append(
    h('p', { class: 'notice bad' }, `${lines.length === 1 ? 'One line has a mistake' : `${lines.length} lines have mistakes`}: fix ${lines.length === 1 ? 'it' : 'them'} and check again. Nothing was saved.`),
    h('table', { class: 'grid line-errors' },
      h('caption', { class: 'sr-only' }, 'Lines with mistakes'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Line'), h('th', { scope: 'col' }, 'Content'), h('th', { scope: 'col' }, 'Mistake'))),
      h('tbody', {}, lines.map((l) => h('tr', { 'data-line': l.line },
        h('th', { scope: 'row' }, l.line ? String(l.line) : '—'),
        h('td', {}, h('code', {}, l.line ? source[l.line - 1] || '' : '')),
        h('td', { class: 'error' }, l.detail))))));
}

function showPreview(box, layout, save) {
  const levels = [...new Set(layout.sections.map((s) => s.price_level))].map((code) => ({ code }));
  const map = new SeatMap(layout, levels, { onToggle: () => {} });
  const seats = layout.sections.reduce((n, s) => n + (s.rows || []).reduce((m, r) => m + r.seats.length, 0), 0);
  const all = new Uint8Array(Math.ceil(seats / 8)).fill(255);
  const button = h('button', { type: 'button', onclick: () => save(button) }, 'Save layout');
  box.append(
    h('h2', {}, 'Preview'),
    h('p', { class: 'notice good', role: 'status' }, `${layout.name}, ${layout.city}: ${layout.sections.length} sections, ${seats.toLocaleString('en')} seats. Nothing is saved yet.`),
    h('section', { class: 'map-wrap', 'aria-label': 'Seat map preview' }, map.controls(), map.el),
    h('p', {}, button));
  map.applySnapshot(btoa(String.fromCharCode(...all)), seats);
  map.reset();
}
