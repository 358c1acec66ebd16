// Linked accounts (docs/fairness.md): clusters of accounts among the
// buyers of the organizer's events that share a card, a device or a
// payout of transfers, over the limit first, and accounts flagged by
// purchase velocity, each with its evidence. The organizer voids an
// order (refunded through the provider, as the order page's refund),
// blocks or unblocks an account, always saying why: every action is in
// the audit log below, with who took it.
import { api, when } from '../api.js';
import { h } from '../dom.js';
import { frame, problemText } from './shell.js';

let seq = 0;

// askReason asks why before an action, in a modal <dialog> whose reason
// is required (kept in the audit log); it resolves the reason, or '' when
// the organizer cancels.
function askReason({ title, text, action, danger = false }) {
  const id = `reason-${++seq}`;
  return new Promise((resolve) => {
    const back = document.activeElement;
    const input = h('textarea', { id: id + '-r', name: 'reason', required: true, maxlength: 500, rows: 3 });
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': id + '-t', 'aria-describedby': id + '-d' },
      h('form', { method: 'dialog', onsubmit: (ev) => {
        if (!input.value.trim()) {
          ev.preventDefault();
          input.focus();
        }
      } },
      h('h2', { id: id + '-t' }, title),
      h('p', { id: id + '-d' }, text),
      h('p', { class: 'field' }, h('label', { for: id + '-r' }, 'Why (kept in the audit log with your name)'), input),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', value: 'ok', class: danger ? 'danger' : '' }, action),
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('cancel') }, 'Cancel'))));
    dialog.addEventListener('close', () => {
      const reason = dialog.returnValue === 'ok' ? input.value.trim() : '';
      dialog.remove();
      if (back && back.focus) back.focus();
      resolve(reason);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
}

const ACTION = { block: 'Blocked', unblock: 'Unblocked', void: 'Voided an order of' };
const SIGNAL = { account: 'the account', card: 'its card', device: 'its device' };

// list serves /organizer/linked.
export async function list(main) {
  const body = frame(main, 'linked', 'Linked accounts');
  const result = h('p', { class: 'notice', role: 'status', hidden: true });
  const content = h('div', {});
  body.append(h('p', { class: 'muted' },
    'Accounts that share a card, a device or tickets transferred between them buy as one fan: together they are limited to what one fan may buy. ',
    'A family sharing a card is linked too: look at the evidence before you act, and unblock an account when its owner explains.'), result, content);
  const say = (text, kind) => {
    result.hidden = false;
    result.className = `notice ${kind}`;
    result.textContent = text;
  };
  const names = {};
  const who = (id) => (names[id] ? `${names[id].name} (${names[id].email})` : `account ${id}`);

  // act asks why, then calls the action and redraws from its answer.
  const act = async (ev, { title, text, action, danger, path, done }) => {
    const button = ev.currentTarget;
    const reason = await askReason({ title, text, action, danger });
    if (!reason) return;
    button.disabled = true;
    try {
      draw(await api('POST', path, { reason }, { retries: 2 }));
      say(done, 'good');
    } catch (err) {
      button.disabled = false;
      say(problemText(err), 'bad');
    }
  };
  const memberRow = (m, events) => {
    const name = `${m.name} (${m.email})`;
    const block = m.blocked
      ? h('button', { type: 'button', class: 'secondary', onclick: (ev) => act(ev, { title: `Unblock ${name}?`, action: 'Unblock',
          text: 'They can log in, hold and buy again, within the limits.', path: `/api/organizer/linked-accounts/${m.id}/unblock`, done: `${name} is unblocked.` }) },
        h('span', { class: 'sr-only' }, `${name}: `), 'Unblock')
      : h('button', { type: 'button', class: 'danger', onclick: (ev) => act(ev, { title: `Block ${name}?`, action: 'Block', danger: true,
          text: 'They cannot log in, hold or pay any more, for any event, until someone unblocks them. Their tickets stay valid: void the orders too if they should not.',
          path: `/api/organizer/linked-accounts/${m.id}/block`, done: `${name} is blocked.` }) },
        h('span', { class: 'sr-only' }, `${name}: `), 'Block');
    const orders = m.orders.flatMap((p) => p.order_ids.map((id) => h('li', {},
      h('a', { href: `/organizer/orders/${id}` }, `#${id}`), ` · ${events[p.event_id] || 'event ' + p.event_id} `,
      h('button', { type: 'button', class: 'link', onclick: (ev) => act(ev, { title: `Void order #${id}?`, action: 'Void and refund', danger: true,
        text: `${name} gets the money back on their card and the order's tickets stop working at the door. This cannot be undone.`,
        path: `/api/organizer/linked-orders/${id}/void`, done: `Order #${id} is voided; its refund goes through the payment provider.` }) },
      h('span', { class: 'sr-only' }, `Order #${id}: `), 'Void'))));
    return h('tr', {},
      h('th', { scope: 'row' }, m.name, h('br'), h('span', { class: 'small muted' }, m.email)),
      h('td', {}, m.orders.reduce((n, p) => n + p.tickets, 0) + ' ticket(s)', orders.length ? h('ul', { class: 'plain' }, orders) : null),
      h('td', {}, m.blocked ? h('span', { class: 'tag bad' }, 'Blocked') : null,
        m.velocity ? h('span', { class: 'tag bad' }, `${m.velocity.purchases} purchases by ${SIGNAL[m.velocity.signal] || m.velocity.signal}`) : null,
        !m.blocked && !m.velocity ? h('span', { class: 'muted' }, '–') : null),
      h('td', {}, block));
  };
  const membersTable = (caption, members, events) => h('table', { class: 'grid' }, h('caption', { class: 'sr-only' }, caption),
    h('thead', {}, h('tr', {}, ['Account', 'Tickets of your events', 'Flags', 'Action'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, members.map((m) => memberRow(m, events))));
  const evidence = (e) => {
    const items = [
      ...e.cards.map((c) => h('li', {}, `One card (${c.value}) paid for ${c.accounts.map(who).join(', ')}`)),
      ...e.devices.map((d) => h('li', {}, `One device (${d.value}) used by ${d.accounts.map(who).join(', ')}`)),
      ...e.transfers.map((t) => h('li', {}, `${who(t.from)} transferred ${t.tickets} ticket(s) to ${who(t.to)}, last ${when(t.last_at)}`)),
    ];
    return items.length ? h('ul', {}, items) : h('p', { class: 'muted' }, 'Linked through accounts not listed here.');
  };

  function draw(v) {
    for (const m of [...v.clusters.flatMap((c) => c.members), ...v.flagged]) names[m.id] = m;
    const events = {};
    for (const c of v.clusters) for (const e of c.events) events[e.event_id] = e.name;
    content.replaceChildren(
      h('h2', {}, 'Clusters'),
      v.clusters.length ? h('div', {}, v.clusters.map((c) => h('section', { class: 'card', 'aria-labelledby': `cluster-${c.id}` },
        h('h3', { id: `cluster-${c.id}` }, `Cluster of ${c.members.length} accounts `,
          c.over_limit ? h('span', { class: 'tag bad' }, 'Over the limit') : h('span', { class: 'tag' }, 'Within the limit')),
        h('ul', {}, c.events.map((e) => h('li', {}, `${e.name}: ${e.tickets} of ${e.limit} tickets one fan may buy`))),
        h('h4', {}, 'Evidence'), evidence(c.evidence),
        membersTable(`Accounts of cluster ${c.id}`, c.members, events))))
        : h('p', { class: 'muted' }, 'No linked accounts among the buyers of your events.'),
      h('h2', {}, 'Buying too fast'),
      v.flagged.length ? membersTable('Accounts flagged by purchase velocity', v.flagged, events)
        : h('p', { class: 'muted' }, 'No buyer of your events bought faster than a fan does.'),
      h('h2', {}, 'Audit log'),
      v.audit.length ? h('table', { class: 'grid' }, h('caption', { class: 'sr-only' }, 'Audit log'),
        h('thead', {}, h('tr', {}, ['When', 'Who', 'What', 'Why'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, v.audit.map((a) => h('tr', {},
          h('th', { scope: 'row' }, when(a.at)), h('td', {}, a.actor_email),
          h('td', {}, `${ACTION[a.action] || a.action} ${a.account_email}`, a.order_id ? ` (order #${a.order_id})` : ''),
          h('td', {}, a.reason)))))
        : h('p', { class: 'muted' }, 'Nothing done yet.'));
  }
  try {
    draw(await api('GET', '/api/organizer/linked-accounts'));
  } catch (err) {
    say(problemText(err), 'bad');
  }
}
