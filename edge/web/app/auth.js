// Log in and sign up. The session is an HttpOnly cookie; the page keeps the
// account's name to show it.
import { api, session } from './api.js';
import { field, h, toast } from './dom.js';
import { navigate } from './nav.js';
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

// signedIn keeps the session; a new account has no door events to ask for.
function signedIn(res, query, { fresh = false } = {}) {
  session.set(fresh ? { ...res.account, doors: 0, doorsAt: Date.now() } : res.account, res.expires_at);
  toast(`Welcome, ${res.account.name}.`, 'info', 2000);
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
    signedIn(await api('POST', '/api/accounts', v), query, { fresh: true });
  }, h('p', {}, 'Already have an account? ', h('a', { href: '/login' + location.search }, 'Log in'))));
}

// verifyEmail opens the link mailed at sign-up: it sends the link's token
// and says whether the email is verified now. The API issues the session
// again when it is this account's, so the waiting room sees it at once.
export async function verifyEmail(main, _p, query) {
  const status = h('p', { role: 'status' }, 'Checking your link…');
  main.append(h('h1', {}, 'Verify your email'), status);
  try {
    const res = await api('POST', '/api/accounts/email-verification', { token: query.get('token') || '' });
    if (res.token) session.set({ ...session.get(), ...res.account }, res.expires_at);
    status.textContent = `Thank you: ${res.account.email} is verified.`;
  } catch (err) {
    status.replaceWith(h('p', { class: 'error', role: 'alert' }, explain(err)));
    main.append(resend());
  }
  main.append(h('p', {}, h('a', { href: '/' }, 'See upcoming events')));
}

// resend asks for a new verification link for the logged-in account.
function resend() {
  if (!session.get()) return h('p', {}, h('a', { href: '/login?next=/verify-email' }, 'Log in'), ' to ask for a new link.');
  const said = h('p', { role: 'status' });
  const button = h('button', { type: 'button', onclick: async () => {
    button.disabled = true;
    try {
      await api('POST', '/api/me/email-verification');
      said.textContent = `A new link is on its way to ${session.get().email}.`;
    } catch (err) {
      said.textContent = explain(err);
      button.disabled = false;
    }
  } }, 'Mail me a new link');
  return h('div', {}, button, said);
}

// notOrganizer is where a signed-in account that is not an organizer lands
// when it opens the console (the edge sends it here, and so does the
// router when the API refuses the role): it says so, instead of a log-in
// page that would look like a failed log-in, and offers the way to an
// organizer account.
export function notOrganizer(main, _p, query) {
  const s = session.get();
  const back = next(query);
  const error = h('p', { class: 'error', role: 'alert' });
  const switchAccount = async () => {
    try {
      await api('DELETE', '/api/session');
      session.clear();
      navigate('/login?next=' + encodeURIComponent(back), { replace: true });
    } catch (err) {
      error.textContent = explain(err);
    }
  };
  main.append(
    h('h1', {}, 'This account is not an organizer'),
    h('p', {}, s ? ['You are logged in as ', h('strong', {}, s.email || s.name), ', '] : 'This account is ',
      'a fan account. The organizer console is only for accounts that run events.'),
    h('p', {}, 'To manage events, log in with an organizer account. If this account has just been made an organizer, log in again with it.'),
    h('p', { class: 'actions' },
      h('button', { type: 'button', onclick: switchAccount }, 'Log in with another account'),
      ' ', h('a', { class: 'button secondary', href: '/' }, 'See upcoming events')),
    error);
}
