// My orders, newest first.
import { api } from './api.js';
import { h } from './dom.js';
import { summary } from './order.js';

export async function render(main) {
  const res = await api('GET', '/api/me/orders');
  main.append(h('h1', {}, 'My orders'),
    res.orders.length
      ? h('ul', { class: 'events' }, res.orders.map((o) => h('li', { class: 'card' },
          h('h2', {}, h('a', { href: `/orders/${o.id}` }, `Order ${o.id}`)),
          h('p', { class: 'muted' }, summary(o)),
          h('p', {}, h('span', { class: 'tag ' + (o.status === 'paid' ? 'good' : o.status === 'pending' ? '' : 'bad') }, o.status)))))
      : h('p', {}, 'No orders yet. ', h('a', { href: '/' }, 'Find an event')));
}
