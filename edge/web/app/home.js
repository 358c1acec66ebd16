// Home: search and filters over upcoming events, keyset-paginated, with
// what is on sale now first and what opens within a week right after it: a
// fan arriving for an on-sale finds it at the top, not among events dated
// before it.
import { api, when } from './api.js';
import { h } from './dom.js';
import { navigate } from './nav.js';

const CATEGORIES = ['', 'music', 'sports', 'comedy', 'classical', 'theatre'];

export async function render(main, _params, query) {
  const form = h('form', { class: 'search', role: 'search', onsubmit: (e) => {
      e.preventDefault();
      const q = new URLSearchParams();
      for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
      navigate('/' + (q.toString() ? '?' + q : ''));
    } },
    h('p', { class: 'field grow' }, h('label', { for: 'q' }, 'Search events'),
      h('input', { id: 'q', name: 'q', type: 'search', placeholder: 'Artist, team, venue…', value: query.get('q') || '' })),
    h('p', { class: 'field' }, h('label', { for: 'city' }, 'City'),
      h('input', { id: 'city', name: 'city', value: query.get('city') || '', placeholder: 'Any city' })),
    h('p', { class: 'field' }, h('label', { for: 'category' }, 'Category'),
      h('select', { id: 'category', name: 'category' }, CATEGORIES.map((c) =>
        h('option', { value: c, selected: c === (query.get('category') || '') }, c || 'Any')))),
    h('p', { class: 'field' }, h('label', { for: 'from' }, 'From'),
      h('input', { id: 'from', name: 'from', type: 'date', value: query.get('from') || '' })),
    h('p', { class: 'field' }, h('button', { type: 'submit' }, 'Search')),
  );
  const list = h('ul', { class: 'events', 'aria-live': 'polite' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'More events');
  main.append(h('h1', {}, query.get('q') ? `Events matching “${query.get('q')}”` : 'Upcoming events'), form);

  const params = new URLSearchParams(query);
  params.delete('cursor');
  const first = (filter) => {
    const q = new URLSearchParams(params);
    q.set(filter, 'true');
    q.set('limit', '6');
    return api('GET', '/api/events?' + q).then((res) => res.events);
  };
  const [now, soon] = await Promise.all([first('on_sale'), first('opens_soon')]);
  soon.sort((a, b) => new Date(a.sale_starts_at) - new Date(b.sale_starts_at)); // the next sale first
  const shown = new Set([...now, ...soon].map((e) => e.id));
  if (now.length) main.append(h('h2', {}, 'On sale now'), h('ul', { class: 'events' }, now.map(card)));
  if (soon.length) main.append(h('h2', {}, 'Opening soon'), h('ul', { class: 'events' }, soon.map(card)));
  if (shown.size) main.append(h('h2', {}, 'All upcoming events'));
  main.append(list, more);
  params.set('limit', '12');
  async function page(cursor) {
    if (cursor) params.set('cursor', cursor);
    const res = await api('GET', '/api/events?' + params);
    for (const e of res.events) if (!shown.has(e.id)) list.append(card(e));
    if (!list.children.length) list.append(h('li', { class: 'muted' }, 'No events match. Try another search.'));
    more.hidden = !res.next_cursor;
    more.onclick = () => page(res.next_cursor);
  }
  await page();
}

function card(e) {
  return h('li', { class: 'card' },
    h('h2', {}, h('a', { href: `/events/${e.id}` }, e.name)),
    h('p', { class: 'muted' }, `${when(e.starts_at)} · ${e.venue_name}, ${e.city}`),
    h('p', {}, h('span', { class: 'tag' }, e.category), ' ', status(e)));
}

export function status(e) {
  if (e.status === 'sold_out') return h('span', { class: 'tag bad' }, 'Sold out');
  const opens = new Date(e.sale_starts_at);
  if ((e.status === 'on_sale' || e.status === 'scheduled') && opens > Date.now()) return h('span', { class: 'tag' }, 'Sale opens ' + when(e.sale_starts_at));
  if (e.status === 'on_sale') return h('span', { class: 'tag good' }, e.waiting_room.enabled ? 'On sale · waiting room' : 'On sale');
  if (e.status === 'scheduled') return h('span', { class: 'tag' }, 'On sale ' + when(e.sale_starts_at));
  return h('span', { class: 'tag' }, e.status.replace('_', ' '));
}
