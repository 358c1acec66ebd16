// An event's verified-fan presale as its organizer runs it: a form that
// opens the registration (the window, the number of codes, when the
// presale ends), then the published commitment, the counts, the draw
// button once the registration has closed, and the revealed seed. The
// console's event page draws it (docs/fairness.md).
import { api, when } from '../api.js';
import { h, toast } from '../dom.js';
import { problemText } from './shell.js';

const phases = { upcoming: 'Registration not open yet', open: 'Registration open', closed: 'Registration closed: draw pending', drawn: 'Drawn' };

export async function presaleSection(e) {
  const section = h('section', { class: 'presale', 'aria-labelledby': 'presale-title' });
  const path = `/api/events/${e.id}/presale`;

  async function load() {
    let p = null;
    try {
      p = await api('GET', path);
    } catch (err) {
      if (err.code !== 'presale-not-found') throw err;
    }
    show(p);
  }
  // After a change the console shows the answer of the change itself: the
  // public read is cached (5 s, by the browser and the CDN), and would
  // still say "no presale" right after one is opened.
  function show(p) {
    section.replaceChildren(h('h2', { id: 'presale-title' }, 'Verified-fan presale'), p ? summary(p) : openForm());
  }

  function summary(p) {
    const error = h('p', { class: 'error', role: 'alert' });
    const rows = [
      ['Phase', phases[p.phase] || p.phase],
      ['Registration', `${when(p.registration_opens_at)} to ${when(p.registration_closes_at)}`],
      ['Presale', `from the sale start to ${when(p.presale_ends_at)}`],
      ['Codes', String(p.codes)],
      ['Registered', String(p.registrations)],
      ['Winners', String(p.winners)],
      ['Codes redeemed', String(p.redeemed)],
      ['Seed commitment (SHA-256)', h('code', { class: 'hash', id: 'presale-commitment' }, p.seed_sha256)],
    ];
    if (p.seed) rows.push(['Seed (revealed)', h('code', { class: 'hash', id: 'presale-seed' }, p.seed)]);
    const draw = p.phase === 'closed' ? h('button', { type: 'button', onclick: async (ev) => {
        ev.target.disabled = true;
        error.textContent = '';
        try {
          const d = await api('POST', `${path}/draw`);
          toast(`Drawn: ${d.winners} winners got their codes.`);
          show(d);
        } catch (err) {
          ev.target.disabled = false;
          error.textContent = problemText(err);
        }
      } }, 'Run the draw') : '';
    return h('div', {},
      h('dl', { class: 'facts', id: 'presale-facts' }, rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      p.registration_ids_url ? h('p', { class: 'small' }, h('a', { href: p.registration_ids_url }, 'Registration ids'),
        ' · anyone can check the draw with ', h('code', {}, 'go run ./tools/cmd/presaledraw'), '.') : '',
      draw, error);
  }

  function openForm() {
    const error = h('p', { class: 'error', role: 'alert' });
    const local = (d) => new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
    const start = new Date(e.sale_starts_at);
    const input = (name, label, attrs) => h('p', { class: 'field' }, h('label', { for: `presale-${name}` }, label),
      h('input', { id: `presale-${name}`, name, required: true, ...attrs }));
    const form = h('form', { onsubmit: async (ev) => {
        ev.preventDefault();
        error.textContent = '';
        const v = (n) => form.elements[n].value;
        try {
          const p = await api('PUT', path, {
            registration_opens_at: new Date(v('opens')).toISOString(),
            registration_closes_at: new Date(v('closes')).toISOString(),
            presale_ends_at: new Date(v('ends')).toISOString(),
            codes: Number(v('codes')),
          });
          toast('Registration opened; its seed commitment is published.');
          show(p);
        } catch (err) {
          error.textContent = problemText(err);
        }
      } },
      h('p', { class: 'small muted' }, 'Fans register in a window that closes by the sale start; a draw picks who gets a code. ' +
        'From the sale start until the presale ends, only code holders get into the waiting room.'),
      input('opens', 'Registration opens', { type: 'datetime-local', step: 1, value: local(new Date()) }),
      input('closes', 'Registration closes', { type: 'datetime-local', step: 1, value: local(new Date(Math.min(start.getTime(), Date.now() + 86400000))) }),
      input('ends', 'Presale ends', { type: 'datetime-local', step: 1, value: local(new Date(start.getTime() + 3600000)) }),
      input('codes', 'Presale codes', { type: 'number', min: 1, max: 1000000, value: 100 }),
      h('button', { type: 'submit' }, 'Open registration'), error);
    return form;
  }

  await load();
  return section;
}
