// The waiting room. Cheap by design: the shared progress (cached at the edge
// for a second) every 2 s, the fan's own status every couple of minutes or
// when the line reaches them. The admission token arrives as a cookie with the
// status that admits the fan; then the page moves on to the booking page.
import { api, layoutOf, when } from './api.js';
import { h } from './dom.js';
import { navigate } from './nav.js';
import { explain } from './messages.js';
import { solve } from './challenge.js';

export async function render(main, [id]) {
  const e = await api('GET', `/api/events/${id}`);
  const headline = h('p', { class: 'lead' }, 'Joining the line…');
  // Screen readers hear the line move in steps, not every poll.
  const say = h('p', { class: 'sr-only', role: 'status' });
  let said = { key: '', at: 0 };
  const announce = (text, key, now = false) => {
    const [kind] = key.split(':');
    if (key === said.key || (!now && kind === said.key.split(':')[0] && Date.now() - said.at < 30000)) return;
    said = { key, at: Date.now() };
    say.textContent = text;
  };
  const bar = h('progress', { max: 100, value: 0, 'aria-label': 'Your progress in the line' });
  const facts = h('dl', { class: 'facts' });
  const note = h('p', { class: 'notice', hidden: true, role: 'status' });
  const leave = h('button', { type: 'button', class: 'link', onclick: leaveLine }, 'Leave the line');
  main.append(
    h('h1', {}, `Waiting room · ${e.name}`), headline, say, bar, facts, note, h('p', {}, leave),
    h('section', { class: 'tips', 'aria-label': 'While you wait' },
      h('h2', {}, 'While you wait'),
      h('ul', {},
        h('li', {}, 'Keep this page open. It updates by itself: there is no need to refresh, and refreshing does not move you forward.'),
        h('li', {}, 'One place per account: opening more tabs or devices does not help.'),
        h('li', {}, 'When it is your turn this page takes you to the seat map, and you have a few minutes to choose.'))));

  let stopped = false;
  let timers = [];
  let mine = null; // last own status
  let progress = null;
  let base = null; // progress.served when the last status was read
  let asked = 0;
  const later = (fn, ms) => timers.push(setTimeout(() => !stopped && fn(), ms));

  function show() {
    const st = mine && mine.state;
    note.hidden = true;
    facts.replaceChildren();
    leave.hidden = !['prequeue', 'waiting'].includes(st);
    if (!st) return;
    if (st === 'admitted') {
      performance.mark('catraca:admitted');
      if (mine.admission_expires_at) sessionStorage.setItem(`catraca.turn.${id}`, mine.admission_expires_at);
      headline.textContent = 'It is your turn! Taking you to the seat map…';
      announce(headline.textContent, 'admitted', true);
      bar.value = 100;
      navigate(`/events/${id}/book`, { replace: true });
      stopped = true;
      return;
    }
    if (st === 'prequeue') {
      const left = Math.max(0, Math.round((new Date(mine.draw_at) - Date.now()) / 1000));
      headline.textContent = left > 0
        ? `You are in. In ${clock(left)} everyone here gets a random place in line, so arriving early gives no advantage.`
        : 'Drawing places in line…';
      add('Draw at', when(mine.draw_at));
      announce(`You are in. Places in line are drawn at ${when(mine.draw_at)}.`, 'prequeue');
      return;
    }
    if (st === 'waiting') {
      // position is a dense rank (1 = next) at the last status; the shared
      // progress tells how many were admitted since then.
      const pos = mine.position || 0;
      if (progress && base === null) base = progress.served;
      const moved = progress && base !== null ? progress.served - base : 0;
      const ahead = pos ? Math.max(0, pos - 1 - moved) : mine.ahead;
      const rate = progress ? progress.admitted_last_minute : 0;
      const eta = rate > 0 ? Math.round((ahead / rate) * 60) : mine.eta_seconds;
      // At the front, "You are next" reads as a wait behind someone: say
      // what happens instead (a free place to shop lets the fan in at once).
      // While entry is paused a free place lets nobody in.
      const then = !progress ? '' : progress.paused ? ' You go in once entry resumes.'
        : progress.active < progress.ceiling ? ' Taking you to the seat map in a moment…'
          : ' You go in as soon as a fan who is buying finishes.';
      headline.textContent = ahead > 0 ? `You are in line. ${ahead.toLocaleString('en')} ${ahead === 1 ? 'person is' : 'people are'} ahead of you.`
        : `Nobody is ahead of you.${then}`;
      announce(headline.textContent, `waiting:${step(ahead)}`, ahead <= 3);
      // The map is immutable and cached: fetch it before the turn comes.
      if (ahead <= Math.max(50, progress ? progress.ceiling : 0)) layoutOf(e).catch(() => {});
      bar.value = pos > 1 ? Math.min(99, Math.round((1 - ahead / (pos - 1)) * 100)) : 99;
      add('People ahead', ahead.toLocaleString('en'));
      if (progress && progress.paused) {
        // Nobody gets in while paused: an estimate would be a promise.
        note.hidden = false;
        note.textContent = 'Entry is paused by the organizer; your place is kept. This page moves on by itself when entry resumes.';
        announce(note.textContent, 'paused', true);
      } else if (eta) {
        add('Estimated wait', eta < 60 ? 'under a minute' : `about ${Math.round(eta / 60)} min`);
      }
      if (progress) add('Shopping now', `${progress.active} of ${progress.ceiling}`);
      return;
    }
    const messages = {
      soldout: 'This event is sold out. Thank you for waiting.',
      expired: 'Your turn came and went. You can join the line again.',
      notyet: mine.opens_at
        ? `The waiting room opens on ${when(mine.opens_at)}. Keep this page open and it joins the line by itself, or come back then.`
        : 'The waiting room opens soon.',
      over: 'The sale for this event is over.',
      opening: 'The waiting room is opening. This page joins the line by itself in a moment.',
      closed: 'This event has no waiting room right now.',
      none: 'You are not in this line.',
    };
    headline.textContent = messages[st] || 'Checking your place in line…';
    announce(headline.textContent, st, true);
    const rejoin = () => h('button', { type: 'button', onclick: () => join() }, 'Join the line');
    const next = {
      expired: rejoin,
      none: rejoin,
      closed: () => h('a', { class: 'button', href: `/events/${id}/book` }, 'Choose seats'),
      over: () => h('a', { href: `/events/${id}` }, 'Back to the event'),
    }[st];
    if (next) {
      note.hidden = false;
      note.replaceChildren(next());
    }
  }

  // Leaving gives the place (or the shopping slot) to the next fan now.
  async function leaveLine() {
    leave.disabled = true;
    try {
      await api('DELETE', `/api/events/${id}/queue`);
      stopped = true;
      navigate(`/events/${id}`);
    } catch (err) {
      headline.textContent = explain(err);
      leave.disabled = false;
    }
  }

  function add(k, v) {
    facts.append(h('dt', {}, k), h('dd', {}, v));
  }

  // calm is the fail-closed state: the room is down, the place is kept.
  function calm(err, retry) {
    const after = Math.min(30, Number((err.body && err.body.retry_after) || 5));
    note.hidden = false;
    note.textContent = 'The waiting room is busy for a moment. Your place is kept; this page tries again by itself.';
    later(retry, after * 1000 + Math.random() * 2000);
  }

  // answer is a solved challenge sent with the join; tries counts the
  // checks asked in a row (a refused answer gets one fresh check).
  async function join(answer, tries = 0) {
    try {
      mine = await api('POST', `/api/events/${id}/queue`, answer, { retries: 0 });
      // The line opens any moment: join again in a second or two (the
      // answer's Retry-After), spread a little so fans do not arrive at once.
      if (mine.state === 'opening') {
        show();
        return later(() => join(), 1000 + Math.random() * 1000);
      }
      await status();
    } catch (err) {
      if (err.status === 503) return calm(err, () => join(answer, tries));
      // A risky join first proves some work; the page does it by itself.
      if ((err.code === 'challenge-required' || err.code === 'challenge-failed') && tries < 2) {
        if (err.code === 'challenge-failed') return join(undefined, tries + 1);
        headline.textContent = 'Checking this browser before giving you a place. This takes a few seconds; keep the page open.';
        announce(headline.textContent, 'challenge', true);
        return join(await solve(err.body.challenge), tries + 1);
      }
      // Before the line opens, or once the sale is over, asking again
      // changes nothing: say so and wait for the opening time.
      if (err.code === 'queue-not-open') {
        mine = { state: 'notyet', opens_at: err.body.opens_at };
        show();
        return wake(mine.opens_at);
      }
      if (err.code === 'sales-closed') {
        mine = { state: 'over' };
        return show();
      }
      throw err;
    }
  }

  // wake joins the line once it opens, a few seconds spread over the fans
  // who waited on this page; an opening days away is left to a reload.
  function wake(at) {
    const wait = new Date(at) - Date.now() + Math.random() * 5000;
    if (!(wait < 6 * 3600 * 1000)) return;
    later(() => join().then(() => later(tick, 500)).catch((err) => {
      headline.textContent = explain(err);
    }), Math.max(0, wait));
  }

  async function status() {
    try {
      mine = await api('GET', `/api/events/${id}/queue`, undefined, { retries: 0 });
      base = progress ? progress.served : null;
      asked = Date.now();
    } catch (err) {
      if (err.status === 503) return calm(err, status);
      headline.textContent = explain(err);
      return;
    }
    show();
    const every = (mine.poll && mine.poll.status_every_ms) || 60000;
    if (mine.state === 'prequeue') {
      // Everyone asks for their place after the draw, spread over the time
      // before admission starts so the origin is not hit all at once.
      const draw = new Date(mine.draw_at);
      later(() => {
        const admit = progress && progress.admission_starts_at ? new Date(progress.admission_starts_at) : draw;
        later(status, Math.random() * Math.max(3000, admit - Date.now() - 2000));
      }, Math.max(1000, draw - Date.now() + 1500));
    }
    else if (['waiting'].includes(mine.state)) later(status, every);
  }

  // Near the front (the shared counters are about a second old) the page
  // asks for its own status every second, so the turn is picked up when it
  // comes.
  const nearFront = () => mine && mine.state === 'waiting' && progress && base !== null &&
    progress.served - base + near(progress) >= (mine.position || 1) - 1;

  async function tick() {
    if (mine && idle.includes(mine.state)) return; // nothing moves until the fan joins again
    try {
      progress = await api('GET', `/api/events/${id}/queue/progress`, undefined, { retries: 0 });
      if (nearFront() && Date.now() - asked > 900) await status();
      else if (mine && (mine.state === 'waiting' || mine.state === 'prequeue')) show();
      if (progress.sold_out && mine && mine.state !== 'admitted') {
        mine = { state: 'soldout' };
        show();
        return;
      }
    } catch {
      // the shared counters are a nicety; keep going
    }
    later(tick, nearFront() ? 1000 : (mine && mine.poll && mine.poll.progress_every_ms) || 2000);
  }

  await join();
  later(tick, 500);
  const everySecond = setInterval(() => mine && mine.state === 'prequeue' && show(), 1000);
  return () => {
    stopped = true;
    timers.forEach(clearTimeout);
    timers = [];
    clearInterval(everySecond);
  };
}

// idle states have no line to follow.
const idle = ['notyet', 'over'];

// near is how many places past the shared served count (about a second old)
// still counts as the front: two seconds of admissions, at least a quarter
// of the ceiling.
const near = (p) => 20 + Math.max(Math.floor((p.ceiling || 0) / 4), Math.floor((p.admitted_last_minute || 0) / 30));

// step rounds a place in line to what is worth announcing.
const step = (n) => (n >= 1000 ? Math.round(n / 1000) * 1000 : n >= 100 ? Math.round(n / 100) * 100 : n >= 10 ? Math.round(n / 10) * 10 : n);

const clock = (s) => `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
