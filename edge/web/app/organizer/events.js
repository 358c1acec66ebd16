// The console's events: every event of the organizer, newest first.
import { api, when } from '../api.js';
import { h } from '../dom.js';
import { frame } from './shell.js';

const STATUS = { draft: 'Draft', scheduled: 'Scheduled', on_sale: 'On sale', closed: 'Sales closed', sold_out: 'Sold out', cancelled: 'Cancelled' };

export const statusTag = (e) =>
  h('span', { class: 'tag' + (e.status === 'on_sale' ? ' good' : e.status === 'cancelled' ? ' bad' : '') }, STATUS[e.status] || e.status);

export async function list(main) {
  const body = frame(main, 'events', 'Events');
  const { events } = await api('GET', '/api/organizer/events');
  body.append(events.length
    ? h('table', { class: 'grid' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col' }, 'Starts'),
          h('th', { scope: 'col' }, 'Venue'), h('th', { scope: 'col' }, 'Status'))),
        h('tbody', {}, events.map((e) => h('tr', {},
          h('th', { scope: 'row' }, e.name), h('td', {}, when(e.starts_at)),
          h('td', {}, `${e.venue_name}, ${e.city}`), h('td', {}, statusTag(e))))))
    : h('p', {}, 'No events yet.'));
}
