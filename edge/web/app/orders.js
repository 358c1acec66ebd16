// My orders, newest first, each with its event's name, date and venue.
import { api, eventInfo, eventWhen } from './api.js';
import { h } from './dom.js';
import { summary } from './order.js';

const STATUS = { paid: 'Paid', pending: 'Waiting for payment', expired: 'Expired', cancelled: 'Cancelled', refunded: 'Refunded' };

export async function render(main) {
  const res = await api('GET', '/api/me/orders');
  const ids = [...new Set(res.orders.map((o) => o.event_id))];
  const events = Object.fromEntries(await Promise.all(ids.map((id) => eventInfo(id).then((e) => [id, e], () => [id, null]))));
  main.append(h('h1', {}, 'My orders'),
    res.orders.length
      ? h('ul', { class: 'events' }, res.orders.map((o) => h('li', { class: 'card' },
          h('h2', {}, h('a', { href: `/orders/${o.id}` }, events[o.event_id] ? events[o.event_id].name : `Order ${o.id}`)),
          events[o.event_id] ? h('p', {}, eventWhen(events[o.event_id])) : '',
          h('p', { class: 'muted' }, `Order ${o.id} · ${summary(o)}`),
          h('p', {}, h('span', { class: 'tag ' + (o.status === 'paid' ? 'good' : o.status === 'pending' ? '' : 'bad') }, STATUS[o.status] || o.status)))))
      : h('p', {}, 'No orders yet. ', h('a', { href: '/' }, 'Find an event')));
}
