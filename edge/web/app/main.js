// The app shell: the account menu, drawn before every page, and the router
// (router.js) started over it.
import { api, session } from './api.js';
import { h, toast } from './dom.js';
import { navigate, start } from './router.js';

function renderNav() {
  const nav = document.getElementById('nav');
  const s = session.get();
  nav.replaceChildren(
    ...(s
      ? [
          s.role === 'organizer' && h('a', { href: '/organizer' }, 'Organizer console'),
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
    toast('You are logged out.');
    navigate('/');
  }
}

start(renderNav);
