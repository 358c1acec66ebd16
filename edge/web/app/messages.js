// What a fan reads when something fails: one sentence per problem type,
// written for people. The API's own detail text is for developers and
// never reaches the page.
import { when } from './api.js';

const sentences = {
  'seats-taken': 'Those seats went to another fan a moment before you. Pick other seats.',
  'sold-out': 'There are not enough tickets left for that. Try fewer tickets or another section.',
  'ticket-limit': 'You already have the most tickets one fan can buy for this event.',
  'invalid-hold': 'Choose at least one seat or a number of tickets first.',
  'sales-closed': 'Sales for this event are closed right now.',
  'queue-not-open': 'The waiting room of this event is not open yet.',
  'admission-required': 'Your turn to buy has ended. Join the waiting room again.',
  'hold-expired': 'Your hold expired and the seats went back on sale. Nothing was charged.',
  'hold-not-found': 'These seats are no longer held for you.',
  'hold-paid': 'This order is already paid, so its seats cannot be released.',
  'order-not-payable': 'This order can no longer be paid. Nothing was charged.',
  'order-not-found': 'We could not find that order in your account.',
  'event-not-found': 'We could not find that event. It may have been removed.',
  'ticket-not-found': 'We could not find that ticket in your account.',
  'account-not-found': 'No catraca account uses that email. Ask them to sign up first, then send the ticket again.',
  'transfer-not-allowed': 'This ticket cannot be sent on: it was used or voided, or it has been sent as many times as allowed.',
  'invalid-credentials': 'Wrong email or password.',
  'email-taken': 'An account with this email already exists. Log in instead.',
  'invalid-account': 'Check the form: your name, a valid email and a password of 10 characters or more.',
  'session-expired': 'You were logged out. Log in again to continue.',
  'invalid-verification': 'This link is not valid or has expired (a link works for 7 days). Ask for a new one below.',
  unauthenticated: 'Log in to continue.',
  'slow-down': 'Lots of fans are here at once. Wait a few seconds and try again.',
  'waiting-room-unavailable': 'The waiting room is busy for a moment. Your place is kept; try again in a few seconds.',
  'temporarily-unavailable': 'We are very busy right now. Wait a few seconds and try again.',
};

// explain turns an API error into a sentence for the fan.
export function explain(err) {
  if (err && err.code === 'queue-not-open' && err.body && err.body.opens_at) return `The waiting room opens on ${when(err.body.opens_at)}.`;
  if (err && err.code === 'ticket-limit' && err.body && err.body.remaining > 0) {
    const n = err.body.remaining;
    return `You can buy ${n} more ticket${n > 1 ? 's' : ''} for this event (your other orders and holds count too). Choose ${n} or fewer.`;
  }
  if (err && sentences[err.code]) return sentences[err.code];
  if (err && err.status === 0) return 'You seem to be offline. Check your connection and try again.';
  if (err && (err.status === 429 || err.status >= 500)) return sentences['temporarily-unavailable'];
  return 'Something went wrong. Please try again; if it keeps happening, reload the page.';
}

// paymentFailure says why a payment (a card, a Pix) failed and what to do
// next.
export function paymentFailure(code, until) {
  if (code === 'payment_intent_payment_attempt_expired') {
    return `Your Pix code expired before your bank paid it. Nothing was charged.${until ? ` Press “Pay now” for a new payment page; your seats stay held until ${until}.` : ''}`;
  }
  // Stripe's error codes and decline codes; a lost or stolen card reads as
  // any other decline (the person at the page may not be its holder).
  const declined = 'Your bank declined the card.';
  const why = {
    card_declined: declined,
    generic_decline: declined,
    do_not_honor: declined,
    lost_card: declined,
    stolen_card: declined,
    insufficient_funds: 'The card does not have enough funds.',
    expired_card: 'The card has expired.',
    incorrect_cvc: 'The security code (CVC) is not right.',
    payment_intent_authentication_failure: 'The card’s verification with your bank (3-D Secure) did not succeed.',
  }[code] || 'The payment did not go through.';
  return `${why} Nothing was charged. Press “Pay now” to try again with another card${until ? `; your seats stay held until ${until}` : ''}.`;
}
