// One order: the hold countdown, payment on the PSP's page, and the tickets
// with their QR codes once paid. The PSP's webhook may land a moment after
// the fan returns, so a paying order is re-read until it settles.
import { api, clockTime, eventInfo, eventLine, money, newKey, when } from './api.js';
import { h, toast } from './dom.js';
import { navigate } from './nav.js';
import { liveTickets } from './tickets.js';
import { explain, paymentFailure } from './messages.js';

export async function render(main, [id]) {
  let timer = null;
  let poll = null;
  let stopLive = () => {};
  let rechecks = 0;
  // Set when the fan pressed Pay and the payment page was still being
  // prepared (queued behind the PSP's quota): the fan goes on to it as
  // soon as it is ready, without pressing Pay again. Cleared on leaving,
  // so Back from the payment page never bounces the fan forward again.
  let continueWhenReady = false;
  const box = h('div');
  const title = h('h1', {}, `Order ${id}`);
  const about = h('p', { class: 'lead event-line' });
  main.append(title, about, box);

  async function load() {
    const o = await api('GET', `/api/orders/${id}`);
    // The order knows its event's id only: name, date and venue come from
    // the (cached) event.
    const e = await eventInfo(o.event_id).catch(() => null);
    about.textContent = e ? eventLine(e) : '';
    draw(o);
    return o;
  }

  function draw(o) {
    clearInterval(timer);
    stopLive();
    // A standing line's label carries its quantity ("Floor (standing) × 2").
    const items = h('ul', { class: 'items' }, o.items.map((it) => h('li', {}, it.label, h('span', {}, money(it.price_cents * it.quantity, o.currency)))));
    const total = h('p', { class: 'total' }, 'Total ', h('strong', {}, money(o.total_cents, o.currency)));
    const pay = o.payment || {};
    if (o.status === 'paid') {
      title.textContent = 'Your tickets';
      box.replaceChildren(
        h('p', { class: 'notice good', role: 'status' }, 'Paid. Show these live codes at the door; they are also under ', h('a', { href: '/tickets' }, 'My tickets'), '.'),
        items, total,
        // some tickets given back by the box office (a partial refund)
        o.refunded_cents ? h('p', { class: 'notice' }, `${money(o.refunded_cents, o.currency)} of this order was refunded to your card: `,
          `${o.tickets.filter((t) => t.void).length} ticket(s) no longer admit anyone.`) : '',
        h('p', {}, h('a', { href: '/orders' }, 'All my orders')));
      if (!(o.tickets || []).length) {
        poll = setTimeout(load, 1500); // issuing
        return;
      }
      const live = liveTickets(o.tickets.map((t) => t.id));
      stopLive = live.stop;
      box.firstChild.after(live.el);
      return;
    }
    const lapsed = o.status === 'pending' && (o.hold_status !== 'active' || new Date(o.hold_expires_at) <= new Date())
      && !['processing', 'succeeded'].includes(pay.status);
    if (o.status !== 'pending' || lapsed) {
      const why = {
        expired: 'Your hold expired and the seats went back on sale. Nothing was charged.',
        cancelled: 'This order was cancelled and its seats released. Nothing was charged.',
        refunded: 'This order was refunded.',
        refund_pending: 'Your payment is being refunded: the money goes back to your card once the payment provider confirms.',
      }[lapsed ? 'expired' : o.status] || 'This order can no longer be paid. Nothing was charged.';
      const limited = lapsed ? '' : {
        card_limit: 'This card has already paid for as many tickets to this event as one fan may buy, so this order was not kept. ',
        cluster_limit: 'This account is linked to other accounts (a shared card, device or transfers) that together already bought as many tickets to this event as one fan may, so this order was not kept. If this is a mistake, write to the organizer. ',
      }[pay.failure] || '';
      title.textContent = `Order ${id}`;
      box.replaceChildren(h('p', { class: 'notice bad', role: 'alert' }, limited + why), items,
        h('p', {}, h('a', { class: 'button', href: `/events/${o.event_id}` }, 'Back to the event')));
      return;
    }
    const left = h('p', { class: 'countdown', role: 'timer', 'aria-live': 'off' });
    const say = h('p', { class: 'sr-only', role: 'status' });
    const status = h('p', { role: 'status' });
    const payButton = h('button', { type: 'button' }, pay.status === 'requires_action' && pay.url ? 'Continue to payment' : 'Pay now');
    const seated = o.items.every((it) => it.seat_index !== undefined);
    const release = h('button', { type: 'button', class: 'secondary' }, seated ? 'Release these seats' : 'Release these tickets');
    title.textContent = 'Checkout';
    performance.mark('catraca:checkout');
    const expires = new Date(o.hold_expires_at);
    const until = clockTime(expires);
    box.replaceChildren(h('p', {}, `Your seats are held for you until ${until}.`), left, say, items, total, status,
      h('p', { class: 'actions' }, payButton, release));

    // Screen readers hear the time left at a few steps, not every second.
    const steps = [300, 120, 60, 30].filter((t) => (expires - Date.now()) / 1000 > t);
    const tick = () => {
      const s = Math.max(0, Math.round((expires - Date.now()) / 1000));
      left.textContent = `Time left to pay: ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} (until ${until})`;
      left.classList.toggle('urgent', s < 60);
      if (steps.length && s <= steps[0]) {
        const t = steps.shift();
        say.textContent = `${t >= 120 ? t / 60 + ' minutes' : t === 60 ? 'One minute' : t + ' seconds'} left to pay, until ${until}.`;
      }
      if (s === 0) {
        clearInterval(timer);
        payButton.disabled = true;
        status.textContent = 'Time is up. Checking your order…';
        setTimeout(load, 1500);
      }
    };
    tick();
    timer = setInterval(tick, 1000);

    if (pay.status === 'processing') {
      // A Pix: the fan pays from a bank app, minutes later. The hold waits
      // for it exactly until its code expires (hold_expires_at).
      box.firstChild.textContent = `Your seats are held for your Pix until ${until}.`;
      status.className = 'notice';
      status.textContent = `Your Pix payment is awaiting confirmation from your bank. Pay it in your bank app before ${until}; this page shows your tickets as soon as the bank confirms.`;
      // Nothing to pay or release: the Pix is paid from the bank app, and
      // seats released now would be re-taken (or refunded) when it pays.
      payButton.remove();
      release.remove();
      left.textContent = '';
      clearInterval(timer);
      timer = setInterval(() => {
        const s = Math.max(0, Math.round((expires - Date.now()) / 1000));
        left.textContent = `Time left for your bank to pay: ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} (until ${until})`;
      }, 1000);
      poll = setTimeout(load, 3000);
    } else if (pay.status === 'succeeded') {
      status.textContent = 'Payment received, confirming…';
      payButton.disabled = true;
      poll = setTimeout(load, 1500);
    } else if (pay.status === 'queued') {
      status.textContent = 'Lots of fans are paying right now; your payment page is being prepared…';
      payButton.disabled = true;
      poll = setTimeout(load, 2000);
    } else if (pay.status === 'requires_action' && pay.url && continueWhenReady) {
      continueWhenReady = false;
      status.textContent = 'Your payment page is ready. Opening it…';
      payButton.disabled = true;
      location.assign(pay.url);
      return;
    } else if (pay.status === 'requires_action' && rechecks < 5) {
      // Back from the payment page: its verdict may land a moment later.
      rechecks++;
      poll = setTimeout(load, 2000);
    } else if (pay.status === 'failed') {
      status.className = 'notice bad';
      status.textContent = paymentFailure(pay.failure, until);
    }

    payButton.onclick = async () => {
      payButton.disabled = true;
      try {
        const res = await api('POST', `/api/orders/${id}/checkout`, undefined, { idempotencyKey: newKey() });
        if (res.payment_url) {
          location.assign(res.payment_url);
          return;
        }
        continueWhenReady = true;
        draw(res.order);
      } catch (err) {
        if (err.code === 'hold-expired') return load();
        toast(explain(err), 'bad');
        payButton.disabled = false;
      }
    };
    release.onclick = async () => {
      release.disabled = true;
      try {
        await api('DELETE', `/api/holds/${o.hold_id}`);
        // Back to the map: a release keeps the fan's turn in a waiting
        // room (the map says how long it lasts; once over, the edge sends
        // the fan to the room instead).
        toast(seated ? 'Seats released.' : 'Tickets released.');
        navigate(`/events/${o.event_id}/book`);
      } catch (err) {
        toast(explain(err), 'bad');
        release.disabled = false;
      }
    };
  }

  await load();
  return () => {
    clearInterval(timer);
    clearTimeout(poll);
    stopLive();
  };
}

export function summary(o) {
  return `Ordered ${when(o.created_at)} · ${o.items.length} item${o.items.length > 1 ? 's' : ''} · ${money(o.total_cents, o.currency)}`;
}
