// A fan's presale page: the presale's public facts (the window, the
// seed's commitment, the seed once drawn) and the fan's own state, with
// the one thing to do next: register, wait for the draw, enter the code
// won, or go to the general sale's waiting room (not drawn, or the
// presale over: docs/fairness.md).
import { api, session, when } from './api.js';
import { h } from './dom.js';
import { explain } from './messages.js';

export async function render(main, [id]) {
  const e = await api('GET', `/api/events/${id}`);
  const path = `/api/events/${id}/presale`;
  const mine = h('section', { class: 'card', 'aria-labelledby': 'presale-mine' });
  const facts = h('section', { 'aria-labelledby': 'presale-facts-title' });
  main.append(h('h1', {}, `Presale: ${e.name}`), h('p', { class: 'lead' }, `${when(e.starts_at)} · ${e.venue_name}, ${e.city}`), mine, facts);

  function drawFacts(p) {
    facts.replaceChildren(h('h2', { id: 'presale-facts-title' }, 'How codes are drawn'),
      h('p', {}, `${p.codes} presale codes are drawn among the registrations after the registration closes (${when(p.registration_closes_at)}). ` +
        'The draw\'s seed was fixed when the registration opened: its SHA-256 is below, and the seed is revealed by the draw, so anyone can recompute the winners.'),
      h('dl', { class: 'facts' },
        h('dt', {}, 'Seed commitment (SHA-256)'), h('dd', {}, h('code', { class: 'hash' }, p.seed_sha256)),
        p.seed ? [h('dt', {}, 'Seed'), h('dd', {}, h('code', { class: 'hash' }, p.seed))] : '',
        h('dt', {}, 'Registrations'), h('dd', {}, String(p.registrations))),
      p.registration_ids_url ? h('p', {}, h('a', { href: p.registration_ids_url }, 'All registration ids')) : '');
  }

  async function load() {
    const p = await api('GET', path);
    drawFacts(p);
    const title = h('h2', { id: 'presale-mine' }, 'Your registration');
    if (!session.get()) {
      mine.replaceChildren(title, h('p', {}, h('a', { class: 'button', href: `/login?next=${encodeURIComponent(location.pathname)}` }, 'Log in to register')));
      return;
    }
    const m = await api('GET', `${path}/registration`);
    const error = h('p', { class: 'error', role: 'alert' });
    const state = h('p', { id: 'presale-state', role: 'status' }, m.message);
    const out = [title, state];
    if (m.state === 'not_registered' && p.phase === 'open') {
      out.push(h('button', { type: 'button', onclick: act(() => api('POST', `${path}/registration`), error) }, 'Register for the presale'));
    } else if (m.presale_over || m.state === 'not_drawn') {
      // Over, a code opens nothing more (redeeming answers presale-over):
      // winners too go to the general sale.
      out.push(h('p', {}, h('a', { class: 'button secondary', href: `/events/${id}/queue` }, 'Go to the general sale\'s waiting room')));
    } else if (m.state === 'won') {
      out.push(h('p', {}, 'Your code: ', h('strong', { id: 'presale-code' }, m.code)));
      if (m.redeemed) {
        out.push(h('p', {}, h('a', { class: 'button', href: `/events/${id}/queue` }, 'Join the presale\'s waiting room')));
      } else {
        const code = h('input', { id: 'presale-code-input', name: 'code', required: true, autocomplete: 'off', value: m.code });
        out.push(h('form', { class: 'inline', onsubmit: (ev) => { ev.preventDefault(); act(() => api('POST', `${path}/code`, { code: code.value }), error)(); } },
          h('p', { class: 'field' }, h('label', { for: 'presale-code-input' }, 'Presale code'), code),
          h('button', { type: 'submit' }, 'Use my code')));
      }
    }
    if (m.registration_id) out.push(h('p', { class: 'small muted' }, 'Your registration id (public, it does not name you): ', h('code', {}, m.registration_id)));
    out.push(error);
    mine.replaceChildren(...out);
  }

  function act(run, error) {
    return async () => {
      error.textContent = '';
      try {
        await run();
        await load();
      } catch (err) {
        error.textContent = err.status >= 400 && err.status < 500 && err.message ? err.message : explain(err);
      }
    };
  }

  try {
    await load();
  } catch (err) {
    if (err.code !== 'presale-not-found') throw err;
    mine.replaceChildren(h('p', {}, 'This event has no presale.'));
  }
}
