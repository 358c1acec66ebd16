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
export async function api(method, path, body, { idempotencyKey, headers = {}, retries } = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json', ...headers } };
  const write = method !== 'GET' && method !== 'HEAD';
  if (write) {
    const text = body === undefined ? '' : JSON.stringify(body);
    if (body !== undefined) {
      init.body = text;
      init.headers['Content-Type'] = 'application/json';
    }
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
    const type = res.headers.get('Content-Type') || '';
    const data = type.includes('json') ? await res.json().catch(() => null) : null;
    if (!res.ok) throw new Problem(res.status, data);
    return data;
  }
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
};

export const money = (cents, currency = 'BRL') =>
  new Intl.NumberFormat('en', { style: 'currency', currency }).format(cents / 100);

export const when = (iso) =>
  new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
