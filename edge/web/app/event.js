// Event page: details, prices and the way in (waiting room or booking).
import { api, money, session, when } from './api.js';
import { h } from './dom.js';
import { status } from './home.js';

export async function render(main, [id]) {
  const e = await api('GET', `/api/events/${id}`);
  const prices = h('table', { class: 'prices' },
    h('caption', {}, 'Prices'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Level'), h('th', { scope: 'col' }, 'Price'))),
    h('tbody', {}, (e.price_levels || []).map((p) => h('tr', {}, h('td', {}, p.name), h('td', {}, money(p.price_cents, e.currency))))));
  let action;
  if (e.status === 'sold_out') {
    action = h('p', { class: 'notice bad', role: 'status' }, 'This event is sold out. Tickets released later go back on sale here.');
  } else if (e.status !== 'on_sale') {
    action = h('p', { class: 'notice' }, `Sales open ${when(e.sale_starts_at)}.`);
  } else if (e.waiting_room.enabled) {
    action = h('p', {}, h('a', { class: 'button', href: `/events/${id}/queue` }, session.get() ? 'Join the waiting room' : 'Log in to join the waiting room'));
  } else {
    action = h('p', {}, h('a', { class: 'button', href: `/events/${id}/book` }, 'Choose seats'));
  }
  // A presale's page, when the event has one (404 otherwise).
  const presale = await api('GET', `/api/events/${id}/presale`).then(
    () => h('p', {}, h('a', { href: `/events/${id}/presale` }, 'Verified-fan presale: register, or see your code')), () => '');
  main.append(
    h('h1', {}, e.name),
    h('p', { class: 'lead' }, `${when(e.starts_at)} · ${e.venue_name}, ${e.city}`),
    h('p', {}, status(e)),
    e.description ? h('p', {}, e.description) : '',
    prices,
    h('p', { class: 'muted' }, `Up to ${e.max_per_account} tickets per fan. Seats are held for ${Math.round(e.hold_ttl_seconds / 60)} minutes while you pay.`),
    presale,
    action,
  );
}
