// The console's events: the list, a form to create or edit one (venue and
// layout, dates, sale window, prices with their map colours, limits, hold
// time, waiting room) and the event's page, which publishes it, opens,
// pauses and closes its sale, cancels it with its refunds' progress, and
// manages its door staff.
import { api, money, when } from '../api.js';
import { field, h, toast } from '../dom.js';
import { navigate } from '../nav.js';
import { PALETTE } from '../seatmap.js';
import { frame, problemText } from './shell.js';
import { entryRules } from './entry.js';
import { presaleSection } from './presale.js';
import { doorStaff } from './staff.js';

const STATUS = { draft: 'Draft', scheduled: 'Scheduled', on_sale: 'On sale', closed: 'Sales paused', sold_out: 'Sold out', cancelled: 'Cancelled' };
const CATEGORIES = ['music', 'sports', 'comedy', 'classical', 'theatre'];

export const statusTag = (e) =>
  h('span', { class: 'tag' + (e.status === 'on_sale' ? ' good' : e.status === 'cancelled' ? ' bad' : '') }, saleState(e));

// saleState names where the sale is, the window included.
function saleState(e) {
  const now = new Date();
  if ((e.status === 'on_sale' || e.status === 'closed') && new Date(e.sale_ends_at) <= now) return 'Sale ended';
  if (e.status === 'on_sale' && new Date(e.sale_starts_at) > now) return 'Sale opens ' + when(e.sale_starts_at);
  return STATUS[e.status] || e.status;
}

export async function list(main) {
  const body = frame(main, 'events', 'Events');
  const { events } = await api('GET', '/api/organizer/events');
  body.append(h('p', {}, h('a', { class: 'button', href: '/organizer/events/new' }, 'New event')),
    events.length
      ? h('table', { class: 'grid' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col' }, 'Starts'),
            h('th', { scope: 'col' }, 'Venue'), h('th', { scope: 'col' }, 'Status'))),
          h('tbody', {}, events.map((e) => h('tr', {},
            h('th', { scope: 'row' }, h('a', { href: `/organizer/events/${e.id}` }, e.name)), h('td', {}, when(e.starts_at)),
            h('td', {}, `${e.venue_name}, ${e.city}`), h('td', {}, statusTag(e))))))
      : h('p', {}, 'No events yet.'));
}

export async function create(main) {
  const body = frame(main, 'events', 'New event');
  const { venues } = await api('GET', '/api/venues');
  if (!venues.length) {
    body.append(h('p', {}, 'Import a venue first: ', h('a', { href: '/organizer/venues' }, 'Venues')));
    return;
  }
  body.append(await eventForm(null, venues));
}

export async function show(main, [id]) {
  const { data: e, etag } = await api('GET', `/api/organizer/events/${id}`, undefined, { withETag: true });
  const body = frame(main, 'events', e.name);
  const refunds = h('div', { class: 'refunds' });
  body.append(
    h('p', {}, statusTag(e), ' ', `${when(e.starts_at)} · ${e.venue_name}, ${e.city}`),
    h('p', { class: 'muted' }, `Sale ${when(e.sale_starts_at)} to ${when(e.sale_ends_at)}`,
      e.status !== 'draft' && e.status !== 'cancelled' ? [' · ', h('a', { href: `/events/${e.id}` }, 'Public page'),
        ' · ', h('a', { href: `/organizer/events/${e.id}/live` }, 'Control room')] : ''),
    controls(e), refunds);
  // Revoking still matters once cancelled: a scanner lent is taken back.
  body.append(await doorStaff(e.id, { cancelled: e.status === 'cancelled' }));
  if (e.status === 'cancelled') return watchRefunds(refunds, e.id);
  if (e.status !== 'draft') body.append(await presaleSection(e), await entryRules(e.id));
  body.append(h('h2', {}, 'Settings'), await eventForm(e, null, etag));
}

// controls are the buttons that move the sale along.
function controls(e) {
  const error = h('p', { class: 'error', role: 'alert' });
  const act = (label, run, { confirmText, kind = 'secondary', done } = {}) =>
    h('button', { type: 'button', class: kind, onclick: async (ev) => {
        if (confirmText && !confirm(confirmText)) return;
        ev.target.disabled = true;
        try {
          await run();
          navigate(location.pathname, { replace: true });
          if (done) toast(done); // replaces an older notice ("Draft created")
        } catch (err) {
          ev.target.disabled = false;
          error.textContent = problemText(err);
        }
      } }, label);
  const status = (s) => () => api('PUT', `/api/events/${e.id}/status`, { status: s });
  const ended = new Date(e.sale_ends_at) <= new Date();
  // A draft whose sale window has started is published on sale: fans can
  // buy at once, and no second "Open sale" is needed.
  const open = !ended && new Date(e.sale_starts_at) <= new Date();
  const buttons = [];
  let note = '';
  if (e.status === 'draft') {
    buttons.push(act('Publish', status(open ? 'on_sale' : 'scheduled'), { kind: '',
      done: open ? 'Published and on sale: fans can buy now.' : `Published: the sale opens ${when(e.sale_starts_at)}.` }));
    note = open ? `Its sale window started ${when(e.sale_starts_at)}: publishing opens the sale at once.` : '';
  }
  if ((e.status === 'scheduled' || e.status === 'closed') && !ended) buttons.push(act(e.status === 'closed' ? 'Resume sale' : 'Open sale', status('on_sale'), { kind: '' }));
  if (e.status === 'on_sale' && !ended) buttons.push(act('Pause sale', status('closed')));
  if (['scheduled', 'on_sale', 'closed'].includes(e.status) && !ended) {
    buttons.push(act('Close sale', async () => {
      await api('PATCH', `/api/events/${e.id}`, { sale_ends_at: new Date().toISOString() });
      await status('closed')();
    }, { confirmText: 'Close the sale for good? It ends now; reopening needs a new sale window.' }));
  }
  if (e.status !== 'cancelled') {
    buttons.push(act('Cancel event…', status('cancelled'), { kind: 'danger',
      confirmText: `Cancel ${e.name}? Every paid order is refunded and its tickets void. This cannot be undone.` }));
  }
  return h('div', {}, h('div', { class: 'actions' }, buttons), note ? h('p', { class: 'small muted' }, note) : '', error);
}

// watchRefunds shows the refunds of a cancelled event until none is left;
// refunds that failed (refused by the payment provider, or unanswered after
// the worker's tries) are listed with their buyer and reason, and can be
// asked again.
function watchRefunds(box, id) {
  const bar = h('progress', { max: 1, value: 0, 'aria-labelledby': 'refund-label' });
  const label = h('p', { id: 'refund-label' }, 'Refunds: counting…');
  const failed = h('p', { class: 'error' });
  const retry = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: async () => {
      retry.disabled = true;
      try {
        await api('PUT', `/api/events/${id}/status`, { status: 'cancelled' });
        clearTimeout(timer);
        await poll();
      } catch (err) {
        failed.textContent = problemText(err);
      }
      retry.disabled = false;
    } }, 'Ask again');
  const failures = h('ul', { class: 'items', id: 'refund-failures', hidden: true });
  box.append(h('h2', {}, 'Refunds'), label, bar, failed, failures, retry);
  let timer = 0;
  const poll = async () => {
    try {
      const p = await api('GET', `/api/events/${id}/refunds`);
      bar.max = Math.max(p.total, 1);
      bar.value = p.total ? p.refunded : 1;
      label.textContent = p.total
        ? `Refunds: ${p.refunded} of ${p.total} orders refunded, ${p.remaining} left.`
        : 'No paid orders: nothing to refund.';
      failed.textContent = p.failed ? `${p.failed} refunds failed: the payment provider refused them or did not answer. Those orders are still paid.` : '';
      const list = p.failures || [];
      failures.replaceChildren(...list.map((f) => h('li', {},
        h('span', {}, h('a', { href: `/organizer/orders/${f.order_id}` }, `Order ${f.order_id}`),
          ` · ${f.buyer.name} (${f.buyer.email}) · ${money(f.amount_cents, f.currency)}`),
        h('span', { class: 'small muted' }, `${f.failure} (asked ${f.tries}×, last ${when(f.failed_at)})`))),
        ...(p.failed > list.length ? [h('li', { class: 'muted' }, `and ${p.failed - list.length} more`)] : []));
      failures.hidden = !p.failed;
      retry.hidden = !p.failed;
      if (p.remaining > 0) timer = setTimeout(poll, 1000);
    } catch (err) {
      failed.textContent = problemText(err);
      timer = setTimeout(poll, 5000);
    }
  };
  poll();
  return () => clearTimeout(timer);
}

// local writes a time for a datetime-local input (the viewer's zone).
function local(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

const iso = (v) => (v ? new Date(v).toISOString() : undefined);

// eventForm creates an event (e null: a draft on a chosen venue layout) or
// edits the one whose version etag is: a save sends it as If-Match, so
// settings changed meanwhile (the control room's ceiling, another tab) are
// not overwritten; the API answers 412 and the form says what changed,
// keeping what the organizer typed until they choose to reload.
async function eventForm(e, venues, etag) {
  const error = h('p', { class: 'error', role: 'alert' });
  const stale = h('div', { class: 'notice bad', hidden: true });
  const levels = h('tbody');
  const venue = venues && h('select', { id: 'f-layout', name: 'layout', required: true },
    venues.flatMap((v) => v.versions.map((x) => h('option', { value: `${v.id}/${x.version}`, 'data-city': v.city },
      `${v.name}, version ${x.version} (${x.seat_count.toLocaleString('en')} seats)`))));
  const fill = (rows) => levels.replaceChildren(...rows.map((p, i) => h('tr', {},
    h('th', { scope: 'row' }, p.code),
    h('td', {}, h('input', { name: `name-${p.code}`, 'aria-label': `Name of ${p.code}`, value: p.name || '' })),
    h('td', {}, h('input', { name: `price-${p.code}`, 'aria-label': `Price of ${p.code} in reais`, type: 'number', min: 0.01, step: '0.01', required: true,
      value: p.price_cents !== undefined ? (p.price_cents / 100).toFixed(2) : '' })),
    h('td', {}, h('input', { name: `color-${p.code}`, 'aria-label': `Map colour of ${p.code}`, type: 'color', value: p.color || PALETTE[i % PALETTE.length] })))));
  const city = field('City', { name: 'city', value: e ? e.city : '', autocomplete: 'off' });
  async function loadLevels() {
    const [v, ver] = venue.value.split('/');
    const l = await api('GET', `/api/venues/${v}/layouts/${ver}`);
    fill([...new Set(l.sections.map((s) => s.price_level))].map((code) => ({ code })));
    city.querySelector('input').value = venue.selectedOptions[0].dataset.city;
  }
  if (e) fill(e.price_levels || []);
  else {
    venue.addEventListener('change', () => loadLevels().catch((err) => (error.textContent = problemText(err))));
    await loadLevels();
  }
  const w = e ? e.waiting_room : { enabled: false, ceiling: 1000 };
  const check = (label, attrs) => h('p', { class: 'field check' }, h('input', { id: 'f-' + attrs.name, type: 'checkbox', ...attrs }), h('label', { for: 'f-' + attrs.name }, label));
  const save = h('button', { type: 'submit' }, e ? 'Save changes' : 'Create draft');
  const form = h('form', { class: 'event-form', onsubmit: async (ev) => {
      ev.preventDefault();
      error.textContent = '';
      const body = collect(form, e);
      if (!e) {
        const [v, ver] = venue.value.split('/');
        Object.assign(body, { venue_id: Number(v), layout_version: Number(ver), draft: true });
      }
      stale.hidden = true;
      save.disabled = true;
      try {
        const out = e ? await api('PATCH', `/api/events/${e.id}`, body, { headers: { 'If-Match': etag } }) : await api('POST', '/api/events', body);
        toast(e ? 'Saved.' : 'Draft created. Publish it when it is ready.');
        navigate(`/organizer/events/${out.id}`, { replace: !!e });
      } catch (err) {
        if (err.status === 412) {
          showStale(stale, err);
          stale.scrollIntoView({ block: 'center' });
          return;
        }
        error.textContent = problemText(err);
        error.scrollIntoView({ block: 'center' });
      } finally {
        save.disabled = false;
      }
    } },
    venue ? h('p', { class: 'field' }, h('label', { for: 'f-layout' }, 'Venue and layout'), venue) : '',
    field('Name', { name: 'name', value: e ? e.name : '', required: true, maxlength: 200, autocomplete: 'off' }),
    h('div', { class: 'inline' }, city,
      h('p', { class: 'field' }, h('label', { for: 'f-category' }, 'Category'),
        h('select', { id: 'f-category', name: 'category' }, CATEGORIES.map((c) => h('option', { value: c, selected: e && e.category === c }, c))))),
    h('p', { class: 'field' }, h('label', { for: 'f-description' }, 'Description'),
      h('textarea', { id: 'f-description', name: 'description', rows: 3, maxlength: 5000 }, e ? e.description : '')),
    h('div', { class: 'inline' },
      field('Starts', { name: 'starts_at', type: 'datetime-local', required: true, value: local(e && e.starts_at) }),
      field('Sale opens', { name: 'sale_starts_at', type: 'datetime-local', required: true, value: local(e && e.sale_starts_at) }),
      field('Sale ends', { name: 'sale_ends_at', type: 'datetime-local', required: true, value: local(e && e.sale_ends_at) })),
    h('table', { class: 'grid levels' }, h('caption', {}, 'Price levels'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Level'), h('th', { scope: 'col' }, 'Name'),
        h('th', { scope: 'col' }, 'Price (R$)'), h('th', { scope: 'col' }, 'Map colour'))), levels),
    h('div', { class: 'inline' },
      field('Tickets per account', { name: 'max_per_account', type: 'number', min: 1, max: 1000, value: e ? e.max_per_account : 6 }),
      field('Tickets per hold', { name: 'max_per_hold', type: 'number', min: 1, max: 1000, value: e ? e.max_per_hold : 6 }),
      field('Hold time (minutes)', { name: 'hold_minutes', type: 'number', min: 1, max: 60, value: e ? e.hold_ttl_seconds / 60 : 8 })),
    h('fieldset', { class: 'seat-set' }, h('legend', {}, 'Waiting room'),
      check('Waiting room on', { name: 'room', checked: w.enabled }),
      h('div', { class: 'inline' },
        field('Pre-queue opens', { name: 'prequeue_opens_at', type: 'datetime-local', value: local(w.prequeue_opens_at) }),
        field('Ceiling (shoppers at once)', { name: 'ceiling', type: 'number', min: 1, max: 1000000, value: w.ceiling }))),
    stale, error, save);
  return form;
}

// showStale explains a save refused because the event changed since the
// form was loaded: what changed (the API's errors), that the organizer's
// values are still in the form, and a reload that says it discards them.
function showStale(box, err) {
  const changed = (err.body.errors || []).filter((x) => x.pointer);
  box.replaceChildren(
    h('p', { role: 'alert' }, h('strong', {}, 'Not saved: this event changed since you opened it.'),
      ' Your values are still in the form below.'),
    changed.length ? h('ul', {}, changed.map((x) => h('li', {}, x.detail))) : '',
    h('p', {}, 'Reload to see the event as it is now, then make your changes again.'),
    h('p', {}, h('button', { type: 'button', class: 'secondary', onclick: () => navigate(location.pathname, { replace: true }) },
      'Reload the event (discards your changes)')));
  box.hidden = false;
}

// collect reads the form into the API's shape (an edit sends it all: the
// API validates the event as a whole anyway).
function collect(form, e) {
  const v = Object.fromEntries(new FormData(form));
  const levels = [...form.querySelectorAll('tbody input[name^="price-"]')].map((input) => {
    const code = input.name.slice(6);
    return { code, name: v[`name-${code}`] || code, price_cents: Math.round(Number(v[`price-${code}`]) * 100), color: v[`color-${code}`] };
  });
  return {
    name: v.name, city: v.city, category: v.category, description: v.description,
    starts_at: iso(v.starts_at), sale_starts_at: iso(v.sale_starts_at), sale_ends_at: iso(v.sale_ends_at),
    max_per_account: Number(v.max_per_account), max_per_hold: Number(v.max_per_hold), hold_ttl_seconds: Math.round(Number(v.hold_minutes) * 60),
    waiting_room: { enabled: v.room === 'on', prequeue_opens_at: iso(v.prequeue_opens_at), ceiling: Number(v.ceiling),
      ...(e ? { active_ttl_seconds: e.waiting_room.active_ttl_seconds, admission_ttl_seconds: e.waiting_room.admission_ttl_seconds } : {}) },
    price_levels: levels,
  };
}
