// The organizer console's frame: its section nav beside the page. Console
// pages call frame() and draw into what it returns; router.js maps paths.
import { h } from '../dom.js';
import { explain } from '../messages.js';

const sections = [
  ['events', '/organizer/events', 'Events'],
  ['venues', '/organizer/venues', 'Venues'],
  ['live', '/organizer/live', 'Control room'],
  ['orders', '/organizer/orders', 'Orders'],
  ['linked', '/organizer/linked', 'Linked accounts'],
];

// frame draws the console around a page: title is its h1 and current the
// nav section it belongs to. It returns the element the page fills.
export function frame(main, current, title) {
  const body = h('div', { class: 'console-body' }, h('h1', {}, title));
  main.append(h('div', { class: 'console' },
    h('nav', { class: 'console-nav', 'aria-label': 'Organizer console' },
      h('p', { class: 'console-title' }, 'Organizer console'),
      h('ul', {}, sections.map(([key, href, label]) =>
        h('li', {}, h('a', { href, 'aria-current': key === current ? 'page' : undefined }, label))))),
    body));
  return body;
}

// problemText is what the console says about a failed call: the API's own
// detail (written for whoever sends the request), or the fan app's
// sentence when the network or the server failed.
export const problemText = (err) => (err.status >= 400 && err.status < 500 && err.message ? err.message : explain(err));

