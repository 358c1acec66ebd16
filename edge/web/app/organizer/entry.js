// Entry rules of an event, as its organizer sets them in the console's
// event page: when doors open, printable codes, transfers.
import { api } from '../api.js';
import { h, toast } from '../dom.js';
import { problemText } from './shell.js';

// entryRules draws the form of event id's entry rules (read from its
// check-in figures, which carry them for the organizer).
export async function entryRules(id) {
  const { settings: st } = await api('GET', `/api/events/${id}/checkins`);
  const doors = h('input', { id: 'entry-doors', type: 'datetime-local', value: st.doors_open_at ? local(st.doors_open_at) : '' });
  const statics = h('input', { id: 'entry-static', type: 'checkbox', checked: st.static_codes });
  const allowed = h('input', { id: 'entry-transfers', type: 'checkbox', checked: st.transfers_allowed });
  const max = h('input', { id: 'entry-max', type: 'number', min: 0, max: 100, value: st.max_transfers });
  const error = h('p', { class: 'error', role: 'alert' });
  return h('section', { class: 'entry-rules' }, h('h2', {}, 'Entry rules'),
    h('form', { onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = '';
      try {
        await api('PUT', `/api/events/${id}/entry`, { doors_open_at: doors.value ? new Date(doors.value).toISOString() : null,
          static_codes: statics.checked, transfers_allowed: allowed.checked, max_transfers: Number(max.value) });
        toast('Entry rules saved.');
      } catch (err) {
        error.textContent = problemText(err);
      }
    } },
      h('p', { class: 'field narrow' }, h('label', { for: 'entry-doors' }, 'Doors open (earlier scans say "not valid yet")'), doors),
      h('p', {}, statics, h('label', { for: 'entry-static' }, ' Printable codes: fans may print a code that does not rotate. A copy of it gets in once, whoever is scanned first.')),
      h('p', {}, allowed, h('label', { for: 'entry-transfers' }, ' Fans may send tickets to another account')),
      h('p', { class: 'field narrow' }, h('label', { for: 'entry-max' }, 'Times one ticket may be sent'), max),
      error,
      h('button', { type: 'submit' }, 'Save entry rules')));
}

// local is an instant as a datetime-local input's value.
const local = (iso) => {
  const d = new Date(iso);
  return new Date(d - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
};
