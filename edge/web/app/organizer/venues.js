// The console's venues: the organizer's venues and their layout versions.
import { api, when } from '../api.js';
import { h } from '../dom.js';
import { frame } from './shell.js';

export async function list(main) {
  const body = frame(main, 'venues', 'Venues');
  const { venues } = await api('GET', '/api/venues');
  body.append(venues.length
    ? h('ul', { class: 'events' }, venues.map((v) => h('li', { class: 'card' },
        h('h2', {}, v.name), h('p', { class: 'muted' }, v.city),
        h('ul', {}, v.versions.map((x) => h('li', {}, `Version ${x.version}: ${x.seat_count.toLocaleString('en')} seats, ${when(x.created_at)}`))))))
    : h('p', {}, 'No venues yet.'));
}
