// refundDialog asks which tickets of a paid order to refund and why, and
// shows what goes back before the organizer confirms, in a modal <dialog>
// (focus moves in and back, Escape cancels). It resolves the refund's
// request body ({reason, note} and, unless every valid ticket is picked,
// tickets) or null when cancelled.
import { money } from '../api.js';
import { h } from '../dom.js';

// REASONS are the box office's reasons for a refund (refunds.reason).
export const REASONS = {
  customer_request: 'Customer request',
  duplicate_purchase: 'Duplicate purchase',
  event_changed: 'Event changed',
  fraud: 'Fraud',
  other: 'Other',
};

let seq = 0;

export function refundDialog(o) {
  const id = `refund-${++seq}`;
  const valid = o.status === 'paid' ? o.tickets.filter((t) => !t.void) : [];
  return new Promise((resolve) => {
    const back = document.activeElement;
    const boxes = valid.map((t) => h('input', { type: 'checkbox', name: 'ticket', value: String(t.id), checked: true, id: `${id}-t${t.id}` }));
    const reason = h('select', { id: id + '-r', name: 'reason', required: true, 'aria-describedby': id + '-e' },
      h('option', { value: '' }, 'Choose a reason'),
      Object.entries(REASONS).map(([v, text]) => h('option', { value: v }, text)));
    const note = h('textarea', { id: id + '-n', name: 'note', rows: 2, maxlength: 500 });
    const summary = h('p', { id: id + '-d', 'aria-live': 'polite' });
    const error = h('p', { id: id + '-e', class: 'notice bad', role: 'alert', hidden: true });
    const go = h('button', { type: 'submit', class: 'danger' });
    const cancel = h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close() }, 'Cancel');
    let picked = [];
    const update = () => {
      picked = valid.filter((_, i) => boxes[i].checked);
      const whole = picked.length === valid.length;
      // The whole order gives back what is left of it (a refund_pending
      // order has no valid ticket: its refund is asked again).
      const amount = whole ? o.total_cents - (o.refunded_cents || 0) : picked.reduce((n, t) => n + t.price_cents, 0);
      go.disabled = picked.length === 0 && valid.length > 0;
      go.textContent = whole ? 'Refund the whole order' : `Refund ${picked.length} ticket${picked.length === 1 ? '' : 's'}`;
      summary.textContent = picked.length === 0 && valid.length > 0
        ? 'Pick at least one ticket.'
        : `${o.buyer.name} (${o.buyer.email}) gets ${money(amount, o.currency)} back on their card` +
          (valid.length ? ` and ${whole ? 'every' : 'the picked'} ticket${picked.length === 1 ? '' : 's'} (${picked.length}) stop${picked.length === 1 ? 's' : ''} working at the door.` : '.') +
          ' This cannot be undone.';
    };
    boxes.forEach((b) => b.addEventListener('change', update));
    const form = h('form', { method: 'dialog', novalidate: true, onsubmit: (e) => {
      e.preventDefault();
      if (!reason.value) {
        error.hidden = false;
        error.textContent = 'Choose a reason for this refund.';
        reason.setAttribute('aria-invalid', 'true');
        reason.focus();
        return;
      }
      const body = { reason: reason.value, note: note.value.trim() };
      if (picked.length < valid.length) body.tickets = picked.map((t) => t.id);
      dialog.close(JSON.stringify(body));
    } },
    valid.length ? h('fieldset', {}, h('legend', {}, 'Tickets to refund'),
      h('ul', { class: 'plain' }, valid.map((t, i) => h('li', {}, boxes[i],
        h('label', { for: boxes[i].id }, ` #${t.id} · ${t.label} · ${money(t.price_cents, o.currency)}`))))) : null,
    h('p', {}, h('label', { for: reason.id }, 'Reason'), h('br', {}), reason),
    h('p', {}, h('label', { for: note.id }, 'Note (optional, kept on the order and in the CSV)'), h('br', {}), note),
    summary, error,
    h('div', { class: 'actions' }, go, cancel));
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': id + '-t', 'aria-describedby': id + '-d' },
      h('h2', { id: id + '-t' }, `Refund order #${o.id}?`), form);
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (back && back.focus) back.focus();
      resolve(dialog.returnValue ? JSON.parse(dialog.returnValue) : null);
    });
    update();
    document.body.append(dialog);
    dialog.returnValue = '';
    dialog.showModal();
    cancel.focus(); // the safe choice first
  });
}
