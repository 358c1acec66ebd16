// My door events: the events whose doors the signed-in account keeps, each
// a link to its door page (the account menu links here once the account
// has any). Reading it also refreshes the menu's count.
import { api, session, when } from './api.js';
import { h } from './dom.js';

export async function render(main) {
  const res = await api('GET', '/api/me/door-events');
  session.doors(res.events.length); // the menu's link follows
  main.append(h('h1', {}, 'My door events'),
    res.events.length
      ? h('ul', { class: 'events' }, res.events.map((e) => h('li', { class: 'card' },
          h('h2', {}, h('a', { href: `/events/${e.id}/door` }, `Door: ${e.name}`)),
          h('p', { class: 'muted' }, `${when(e.starts_at)} · ${e.venue_name}, ${e.city}`))))
      : h('p', {}, 'No event has given you its doors. The organizer grants them by your account’s email.'));
}

