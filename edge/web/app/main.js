// The app shell: a small router over History API paths (CloudFront serves
// index.html for every page path), the account menu and notices.
import { api, session } from './api.js';
import { h, toast } from './dom.js';
import { explain } from './messages.js';

const routes = [
  [/^\/$/, () => import('./home.js')],
  [/^\/events\/(\d+)$/, () => import('./event.js')],
  [/^\/events\/(\d+)\/book$/, () => import('./book.js')],
  [/^\/events\/(\d+)\/queue$/, () => import('./queue.js')],
  [/^\/orders$/, () => import('./orders.js')],
  [/^\/orders\/(\d+)$/, () => import('./order.js')],
  [/^\/tickets$/, () => import('./tickets.js')],
  [/^\/events\/(\d+)\/door$/, () => import('./door.js')],
  [/^\/login$/, () => import('./auth.js').then((m) => ({ render: m.login }))],
  [/^\/signup$/, () => import('./auth.js').then((m) => ({ render: m.signup }))],
];

let cleanup = null;

export function navigate(path, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

export function requireLogin() {
  navigate('/login?next=' + encodeURIComponent(location.pathname + location.search), { replace: true });
}

export function renderNav() {
  const nav = document.getElementById('nav');
  const s = session.get();
  nav.replaceChildren(
    ...(s
      ? [
          h('a', { href: '/tickets' }, 'My tickets'),
          h('a', { href: '/orders' }, 'My orders'),
          h('span', { class: 'who' }, s.name || s.email),
          h('button', { type: 'button', class: 'link', onclick: logout }, 'Log out'),
        ]
      : [h('a', { href: '/login' }, 'Log in'), h('a', { href: '/signup', class: 'button small' }, 'Sign up')]),
  );
}

async function logout() {
  try {
    await api('DELETE', '/api/session');
  } finally {
    session.clear();
    renderNav();
    toast('You are logged out.');
    navigate('/');
  }
}

async function render() {
  if (cleanup) cleanup();
  cleanup = null;
  renderNav();
  const main = document.getElementById('main');
  const path = location.pathname;
  for (const [re, load] of routes) {
    const m = re.exec(path);
    if (!m) continue;
    const page = await load();
    main.replaceChildren();
    try {
      cleanup = (await page.render(main, m.slice(1), new URLSearchParams(location.search))) || null;
    } catch (err) {
      if (err.status === 401) {
        session.clear();
        return requireLogin();
      }
      main.replaceChildren(h('h1', {}, 'Something went wrong'), h('p', { class: 'error' }, explain(err)));
    }
    const heading = main.querySelector('h1');
    document.title = heading ? heading.textContent + ' · catraca' : 'catraca';
    main.focus({ preventScroll: true });
    return;
  }
  main.replaceChildren(h('h1', {}, 'Page not found'), h('p', {}, h('a', { href: '/' }, 'See upcoming events')));
}

// Same-origin links go through the router.
document.addEventListener('click', (e) => {
  const a = e.target.closest('a');
  if (!a || a.target || e.ctrlKey || e.metaKey || e.shiftKey || a.origin !== location.origin) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
});
window.addEventListener('popstate', render);
render();
