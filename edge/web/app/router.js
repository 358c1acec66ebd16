// The router: History API paths to page modules, each loaded when first
// shown (CloudFront serves index.html for every page path). Pages import
// navigate and requireLogin from nav.js, never from here or main.js: the
// router hands its navigate to nav.js, so no module imports another in a
// circle (edge/test/imports.test.mjs); main.js draws the account menu and
// calls start().
//
// Organizer console: /organizer/... pages, one module per page under
// organizer/, each drawn inside the console frame of organizer/shell.js
// (its nav lists the console's sections). Add a console page as one line
// in the "Organizer console" block below and a link in shell.js's nav if
// it is a section of its own. The edge lets only organizer sessions load
// /organizer/* (edge/function/viewer-request.js) and the API checks the
// role and ownership on every call.
import { session } from './api.js';
import { h } from './dom.js';
import { explain } from './messages.js';
import { navigate, requireLogin, setNavigator } from './nav.js';

// page loads a module and draws it with one of its exports.
const page = (load, name) => () => load().then((m) => ({ render: m[name] }));

const routes = [
  [/^\/$/, () => import('./home.js')],
  [/^\/events\/(\d+)$/, () => import('./event.js')],
  [/^\/events\/(\d+)\/book$/, () => import('./book.js')],
  [/^\/events\/(\d+)\/queue$/, () => import('./queue.js')],
  [/^\/events\/(\d+)\/presale$/, () => import('./presale.js')],
  [/^\/orders$/, () => import('./orders.js')],
  [/^\/orders\/(\d+)$/, () => import('./order.js')],
  [/^\/tickets$/, () => import('./tickets.js')],
  [/^\/events\/(\d+)\/door$/, () => import('./door.js')],
  [/^\/door$/, () => import('./doors.js')],
  [/^\/login$/, page(() => import('./auth.js'), 'login')],
  [/^\/signup$/, page(() => import('./auth.js'), 'signup')],
  [/^\/verify-email$/, page(() => import('./auth.js'), 'verifyEmail')],
  [/^\/not-an-organizer$/, page(() => import('./auth.js'), 'notOrganizer')],
  // Organizer console.
  [/^\/organizer(\/events)?\/?$/, page(() => import('./organizer/events.js'), 'list')],
  [/^\/organizer\/events\/new$/, page(() => import('./organizer/events.js'), 'create')],
  [/^\/organizer\/events\/(\d+)$/, page(() => import('./organizer/events.js'), 'show')],
  [/^\/organizer\/venues$/, page(() => import('./organizer/venues.js'), 'list')],
  [/^\/organizer\/live$/, page(() => import('./organizer/live.js'), 'pick')],
  [/^\/organizer\/events\/(\d+)\/live$/, page(() => import('./organizer/live.js'), 'room')],
  [/^\/organizer\/orders$/, page(() => import('./organizer/orders.js'), 'search')],
  [/^\/organizer\/orders\/(\d+)$/, page(() => import('./organizer/orders.js'), 'detail')],
  [/^\/organizer\/linked$/, page(() => import('./organizer/linked.js'), 'list')],
];

let cleanup = null;
let shown = 0; // pages drawn: the first is a page load, already at its top
let beforeRender = () => {};

setNavigator((path, { replace }) => {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
});

// render draws the page of the current path.
export async function render() {
  if (cleanup) cleanup();
  cleanup = null;
  beforeRender();
  const main = document.getElementById('main');
  const path = location.pathname;
  for (const [re, load] of routes) {
    const m = re.exec(path);
    if (!m) continue;
    const mod = await load();
    main.replaceChildren();
    try {
      cleanup = (await mod.render(main, m.slice(1), new URLSearchParams(location.search))) || null;
    } catch (err) {
      if (err.status === 401) {
        session.clear();
        return requireLogin();
      }
      if (err.status === 403 && err.code === 'organizer-only') {
        // The role is gone (or the page was reached without the edge).
        return navigate('/not-an-organizer?next=' + encodeURIComponent(path + location.search), { replace: true });
      }
      main.replaceChildren(h('h1', {}, 'Something went wrong'), h('p', { class: 'error' }, explain(err)));
    }
    const heading = main.querySelector('h1');
    document.title = heading ? heading.textContent + ' · catraca' : 'catraca';
    // A new page starts where a loaded one does: at the top of the
    // document, so the next Tab reaches the skip link, then the header.
    if (shown++) {
      document.body.tabIndex = -1;
      document.body.focus({ preventScroll: true });
    }
    return;
  }
  main.replaceChildren(h('h1', {}, 'Page not found'), h('p', {}, h('a', { href: '/' }, 'See upcoming events')));
}

// start routes same-origin links and history moves, and draws the first
// page; shell runs before every page (the account menu).
export function start(shell) {
  beforeRender = shell;
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a');
    // A download (a[download], such as a saved export) is not a page.
    if (!a || a.target || a.hasAttribute('download') || e.ctrlKey || e.metaKey || e.shiftKey || a.origin !== location.origin) return;
    e.preventDefault();
    // A link within the page (the skip link) moves focus there: no page
    // change, no history entry.
    if (a.hash && a.pathname === location.pathname && a.search === location.search) {
      const to = document.getElementById(a.hash.slice(1));
      if (to) to.focus();
      return;
    }
    navigate(a.pathname + a.search);
  });
  window.addEventListener('popstate', render);
  // A page the browser restores from its back-forward cache (Back from the
  // payment page) is as it was left: a pressed button, a stale order or
  // map. Draw it again from what the API says now.
  window.addEventListener('pageshow', (e) => e.persisted && render());
  render();
}
