// Log in and sign up. The session is an HttpOnly cookie; the page keeps the
// account's name to show it.
import { api, session } from './api.js';
import { field, h, toast } from './dom.js';
import { navigate } from './router.js';
import { explain } from './messages.js';

function next(query) {
  const n = query.get('next') || '/';
  return n.startsWith('/') && !n.startsWith('//') ? n : '/';
}

function form(title, fields, submit, footer) {
  const error = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit' }, title);
  const f = h('form', { class: 'narrow', onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = '';
      button.disabled = true;
      try {
        await submit(Object.fromEntries(new FormData(f)));
      } catch (err) {
        error.textContent = explain(err);
      } finally {
        button.disabled = false;
      }
    } }, fields, error, button);
  return [h('h1', {}, title), f, footer];
}

function signedIn(res, query) {
  session.set(res.account, res.expires_at);
  toast(`Welcome, ${res.account.name}.`);
  navigate(next(query), { replace: true });
}

export function login(main, _p, query) {
  main.append(...form('Log in', [
    field('Email', { name: 'email', type: 'email', autocomplete: 'username', required: true }),
    field('Password', { name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
  ], async (v) => signedIn(await api('POST', '/api/session', { email: v.email, password: v.password }), query),
  h('p', {}, 'New here? ', h('a', { href: '/signup' + location.search }, 'Create an account'))));
}

export function signup(main, _p, query) {
  main.append(...form('Sign up', [
    field('Name', { name: 'name', autocomplete: 'name', required: true }),
    field('Email', { name: 'email', type: 'email', autocomplete: 'email', required: true }),
    field('Password (10 characters or more)', { name: 'password', type: 'password', autocomplete: 'new-password', minlength: 10, required: true }),
  ], async (v) => {
    signedIn(await api('POST', '/api/accounts', v), query);
  }, h('p', {}, 'Already have an account? ', h('a', { href: '/login' + location.search }, 'Log in'))));
}
