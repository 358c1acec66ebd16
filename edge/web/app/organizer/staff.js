// Door staff as an event's organizer manages them: who can scan, by the
// email granted (the API never names the account behind an email), a form
// to add someone and a revoke button that takes the doors back at once.
// The console's event page and the scanner page's organizer tools draw it;
// a cancelled event lists and revokes but takes no one new.
import { api, when } from '../api.js';
import { h, toast } from '../dom.js';
import { confirm } from './confirm.js';
import { problemText } from './shell.js';

export async function doorStaff(id, { cancelled = false } = {}) {
  const list = h('ul', { class: 'items', id: 'door-staff', 'aria-labelledby': 'door-staff-title' });
  const empty = h('p', { class: 'muted' }, 'No door staff: only you can scan at this event.');
  const error = h('p', { class: 'error', role: 'alert' });
  const path = `/api/events/${id}/door-staff`;

  async function load() {
    const { staff } = await api('GET', path);
    list.replaceChildren(...staff.map((s) => h('li', {},
      h('span', {}, s.email, h('span', { class: 'small muted' }, ` · since ${when(s.granted_at)}`)),
      h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke ${s.email}`, onclick: () => revoke(s) }, 'Revoke'))));
    list.hidden = !staff.length;
    empty.hidden = !!staff.length;
  }

  async function revoke(s) {
    const sure = await confirm({ title: 'Revoke door staff?', danger: true, action: 'Revoke',
      text: `${s.email} can no longer scan, download the scan bundle or sync offline scans for this event, from now on. Scans their device has not synced yet are not recorded.` });
    if (!sure) return;
    error.textContent = '';
    try {
      await api('DELETE', `${path}/${s.id}`);
      toast(`${s.email} can no longer scan at this event.`);
    } catch (err) {
      // staff-not-found: revoked already (another tab); the list catches up.
      if (err.code !== 'staff-not-found') error.textContent = problemText(err);
    }
    await load().catch((err) => (error.textContent = problemText(err)));
  }

  const email = h('input', { id: 'staff-email', name: 'email', type: 'email', required: true, maxlength: 254, autocomplete: 'off' });
  const add = cancelled ? h('p', { class: 'muted' }, 'A cancelled event takes no new door staff.') : h('form', { class: 'inline', onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = '';
      try {
        const g = await api('POST', path, { email: email.value });
        email.value = '';
        toast(`${g.email} can scan at this event's doors now.`);
        await load();
      } catch (err) {
        error.textContent = problemText(err);
      }
    } },
    h('p', { class: 'field' }, h('label', { for: 'staff-email' }, 'Add door staff (their account email)'), email),
    h('button', { type: 'submit' }, 'Add'));

  await load();
  return h('section', { class: 'door-staff' }, h('h2', { id: 'door-staff-title' }, 'Door staff'),
    h('p', { class: 'small muted' }, 'They scan tickets at ', h('a', { href: `/events/${id}/door` }, 'the door page'),
      '. Revoking takes effect at once, on every device they use.'),
    list, empty, error, add);
}
