// The app shell: the account menu, drawn before every page, and the router
// (router.js) started over it.
import { api, doorsStale, session } from './api.js';
import { h, toast } from './dom.js';
import { navigate } from './nav.js';
import { start } from './router.js';

let doorsAsked = null; // the account whose door events are being asked

function renderNav() {
  const nav = document.getElementById('nav');
  const s = session.get();
  // Door staff's link: asked at sign-in and again on a page change once
  // the count kept with the session is a minute old (doorsStale), so a
  // door granted meanwhile shows without signing in again. A sale's own
  // pages (an event's waiting room and map, an order's checkout) do not
  // ask again: at the busiest minute every fan let in would, on every shard.
  const salePage = /^\/(events|orders)\//.test(location.pathname);
  if (s && (s.doors === undefined || (!salePage && doorsStale(s))) && doorsAsked !== s.id) {
    doorsAsked = s.id;
    api('GET', '/api/me/door-events').then((res) => {
      doorsAsked = null;
      const now = session.get();
      if (!now || now.id !== s.id) return;
      session.doors(res.events.length);
      if ((now.doors > 0) !== (res.events.length > 0)) renderNav();
    }, () => {
      doorsAsked = null;
      if (session.get()) session.doors(s.doors ?? 0); // asked again in a minute, not on every page
    });
  }
  nav.replaceChildren(
    ...(s
      ? [
          s.role === 'organizer' && h('a', { href: '/organizer' }, 'Organizer console'),
          s.doors > 0 && h('a', { href: '/door' }, 'My door events'),
          h('a', { href: '/tickets' }, 'My tickets'),
          h('a', { href: '/orders' }, 'My orders'),
          h('span', { class: 'who' }, s.name || s.email),
          h('button', { type: 'button', class: 'link', onclick: logout }, 'Log out'),
        ].filter(Boolean)
      : [h('a', { href: '/login' }, 'Log in'), h('a', { href: '/signup', class: 'button small' }, 'Sign up')]),
  );
}

async function logout() {
  try {
    await api('DELETE', '/api/session');
  } finally {
    session.clear();
    doorsAsked = null;
    toast('You are logged out.');
    navigate('/');
  }
}

start(renderNav);
