// The API client: JSON in and out, problem details turned into errors,
// x-amz-content-sha256 on writes (CloudFront OAC in front of the Lambda
// function URL requires it) and an Idempotency-Key reused across retries.

export class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `Request failed (${status})`);
    this.status = status;
    this.body = body || {};
    this.code = (this.body.type || '').split('/').pop();
  }
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const retryable = (s) => s === 429 || s === 502 || s === 503 || s === 504;

// api performs one call. Writes are retried up to 3 times on network errors
// and on 429/502/503/504, with the same Idempotency-Key, honouring Retry-After.
// A body is sent as JSON unless a contentType says it is text already;
// raw answers the Response itself (a CSV page) once it is a success. With
// withETag the answer is { data, etag }: the resource's version, for the
// If-Match header of the next change (a stale change is a 412). cache is
// fetch's: 'no-cache' reads past an answer the browser may still keep
// (max-age), as a page must right after its own write.
export async function api(method, path, body, { idempotencyKey, headers = {}, retries, contentType, raw, withETag, cache } = {}) {
  const init = { method, credentials: 'same-origin', cache, headers: { Accept: 'application/json', ...headers } };
  const write = method !== 'GET' && method !== 'HEAD';
  if (write) {
    // Every write says JSON, even without a body: the API refuses other
    // content types on cookie-authenticated writes (CSRF).
    const text = body === undefined ? '' : contentType ? body : JSON.stringify(body);
    if (body !== undefined) init.body = text;
    init.headers['Content-Type'] = contentType || 'application/json';
    init.headers['x-amz-content-sha256'] = await sha256Hex(text);
    if (idempotencyKey) init.headers['Idempotency-Key'] = idempotencyKey;
  }
  const attempts = (retries ?? (write && !idempotencyKey ? 0 : 3)) + 1;
  for (let i = 1; ; i++) {
    let res;
    try {
      res = await fetch(path, init);
    } catch (err) {
      if (i >= attempts) throw new Problem(0, { detail: 'Network error: check your connection and try again.' });
      await sleep(500 * 2 ** i);
      continue;
    }
    if (retryable(res.status) && i < attempts) {
      const after = Number(res.headers.get('Retry-After')) || 2 ** i;
      await sleep(Math.min(after, 10) * 1000);
      continue;
    }
    if (raw && res.ok) return res;
    const type = res.headers.get('Content-Type') || '';
    const data = type.includes('json') ? await res.json().catch(() => null) : null;
    if (!res.ok) throw new Problem(res.status, data);
    return withETag ? { data, etag: res.headers.get('ETag') } : data;
  }
}

// eventInfo reads an event once per page load (name, date, venue for
// orders and tickets).
const events = new Map();
export function eventInfo(id) {
  if (!events.has(id)) {
    events.set(id, api('GET', `/api/events/${id}`).catch((err) => {
      events.delete(id);
      throw err;
    }));
  }
  return events.get(id);
}

// layoutOf fetches an event's seat layout once (it is immutable); the
// waiting room starts it before the fan's turn comes.
const layouts = new Map();
export function layoutOf(e) {
  const key = `${e.venue_id}/${e.layout_version}`;
  if (!layouts.has(key)) {
    layouts.set(key, api('GET', `/api/venues/${key.replace('/', '/layouts/')}`).catch((err) => {
      layouts.delete(key);
      throw err;
    }));
  }
  return layouts.get(key);
}

export const newKey = () => crypto.randomUUID();

// session is what the page knows about the signed-in fan (the token itself
// is an HttpOnly cookie the page cannot read).
export const session = {
  get() {
    try {
      const s = JSON.parse(localStorage.getItem('catraca.account'));
      return s && new Date(s.expires_at) > new Date() ? s : null;
    } catch {
      return null;
    }
  },
  set(account, expiresAt) {
    localStorage.setItem('catraca.account', JSON.stringify({ ...account, expires_at: expiresAt }));
  },
  clear() {
    localStorage.removeItem('catraca.account');
  },
  // doors keeps how many door events the account has, and when that was
  // read (the menu asks again once it is a minute old: doorsStale).
  doors(n) {
    const s = session.get();
    if (s) session.set({ ...s, doors: n, doorsAt: Date.now() }, s.expires_at);
  },
};

// doorsStale tells whether the menu should ask for the account's door
// events again: never asked, or a minute ago, so a grant made while the
// staff are signed in shows on a page within a minute (asking reads every
// shard, so not on every page).
export const doorsStale = (s) => s.doors === undefined || !(Date.now() - (s.doorsAt || 0) < 60_000);

export const money = (cents, currency = 'BRL') =>
  new Intl.NumberFormat('en', { style: 'currency', currency }).format(cents / 100);

export const when = (iso) =>
  new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));

// clockTime is a time of day, as on the fan's watch.
export const clockTime = (d) => new Intl.DateTimeFormat('en', { timeStyle: 'short' }).format(new Date(d));

// eventWhen and eventLine are what orders and tickets say about their event.
export const eventWhen = (e) => `${when(e.starts_at)} · ${e.venue_name}, ${e.city}`;
export const eventLine = (e) => `${e.name} · ${eventWhen(e)}`;
