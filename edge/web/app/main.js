// The app shell: the account menu, drawn before every page, and the router
// (router.js) started over it.
import { api, session } from './api.js';
import { h, toast } from './dom.js';
import { navigate } from './nav.js';
import { start } from './router.js';

let doorsAsked = null; // the account asked for

function renderNav() {
  const nav = document.getElementById('nav');
  const s = session.get();
  // Door staff's link: asked once per sign-in (it reads every shard), then
  // kept with the session; /door refreshes it.
  if (s && s.doors === undefined && doorsAsked !== s.id) {
    doorsAsked = s.id;
    api('GET', '/api/me/door-events').then((res) => {
      if (!session.get()) return;
      session.set({ ...session.get(), doors: res.events.length }, s.expires_at);
      if (res.events.length) renderNav();
    }, () => {});
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
