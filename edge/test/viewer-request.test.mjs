import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { functionPath, jwt, kvsStore, load, randomSecret, request } from './harness.mjs';

const sessionKey = randomSecret();
const admissionKey = randomSecret();
const now = () => Math.floor(Date.now() / 1000);

function setup(extra = {}) {
  const store = kvsStore({
    's:k1': sessionKey.toString('base64'),
    'a:k1': admissionKey.toString('base64'),
    'room:7': '1',
    ...extra,
  });
  return { store, handler: load(store) };
}

const session = (sub = '42', o = {}) =>
  jwt(sessionKey, { sub, aud: ['catraca-session'], exp: now() + 600, role: 'fan', ...o });
const admission = (evt = 7, sub = '42', o = {}) =>
  jwt(admissionKey, { sub, evt, aud: ['catraca-admission'], exp: now() + 600, ...o });

const body = (res) => JSON.parse(res.body.data);

test('the function fits the 10 KB CloudFront Functions limit', () => {
  const size = statSync(functionPath).size;
  assert.ok(size <= 10240, `viewer-request.js is ${size} bytes, over 10,240`);
});

test('public reads pass untouched; tracking parameters dropped and the rest sorted', async () => {
  const { handler } = setup();
  const res = await handler(request({ uri: '/api/events', query: { utm_source: 'x', limit: '5', fbclid: 'y', city: 'Rio', gclid: 'z' } }));
  assert.equal(res.uri, '/api/events');
  assert.deepEqual(Object.keys(res.querystring), ['city', 'limit']);
  assert.equal(res.querystring.city.value, 'Rio');
});

test('app pages are served by index.html; assets keep their path', async () => {
  const { handler } = setup();
  assert.equal((await handler(request({ uri: '/events/3' }))).uri, '/index.html');
  assert.equal((await handler(request({ uri: '/' }))).uri, '/index.html');
  assert.equal((await handler(request({ uri: '/app/seatmap.js' }))).uri, '/app/seatmap.js');
});

test('account routes need a valid session: 401 problem JSON for the API', async () => {
  const { handler } = setup();
  for (const uri of ['/api/me/orders', '/api/orders/5', '/api/holds/9', '/api/events/7/queue']) {
    const res = await handler(request({ uri }));
    assert.equal(res.statusCode, 401, uri);
    assert.equal(res.headers['content-type'].value, 'application/problem+json');
    assert.equal(body(res).status, 401);
  }
  const ok = await handler(request({ uri: '/api/me/orders', cookies: { catraca_session: session() } }));
  assert.equal(ok.uri, '/api/me/orders');
  const bearer = await handler(request({ uri: '/api/orders/5', headers: { Authorization: 'Bearer ' + session() } }));
  assert.equal(bearer.uri, '/api/orders/5');
});

test('the shared queue progress and sign-up, log-in and webhooks need no session', async () => {
  const { handler } = setup();
  assert.equal((await handler(request({ uri: '/api/events/7/queue/progress' }))).uri, '/api/events/7/queue/progress');
  for (const uri of ['/api/accounts', '/api/session', '/api/psp/webhook']) {
    assert.equal((await handler(request({ method: 'POST', uri }))).uri, uri);
  }
  assert.equal((await handler(request({ method: 'POST', uri: '/api/events' }))).statusCode, 401);
});

test('pages that need a session redirect to the login page with the way back', async () => {
  const { handler } = setup();
  const res = await handler(request({ uri: '/orders/12', query: { paid: '1' } }));
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location.value, '/login?next=' + encodeURIComponent('/orders/12?paid=1'));
  // CloudFront's values are still percent-encoded: encoded once more, the
  // way back read "a%20b" where the fan had "a b".
  const spaced = await handler(request({ uri: '/orders/12', query: { q: 'a%20b' } }));
  assert.equal(spaced.headers.location.value, '/login?next=' + encodeURIComponent('/orders/12?q=a%20b'));
});

test('console pages need an organizer session: no session goes to the login page, a fan to a page that says so', async () => {
  const { handler } = setup();
  for (const uri of ['/organizer', '/organizer/', '/organizer/events/3']) {
    const anon = await handler(request({ uri }));
    assert.equal(anon.statusCode, 302, uri);
    assert.equal(anon.headers.location.value, '/login?next=' + encodeURIComponent(uri));
    for (const cookies of [{ catraca_session: session() }, { catraca_session: session('42', { role: undefined }) }]) {
      const res = await handler(request({ uri, cookies, query: { tab: 'live' } }));
      assert.equal(res.statusCode, 302, uri);
      assert.equal(res.headers.location.value, '/not-an-organizer?next=' + encodeURIComponent(uri + '?tab=live'));
    }
    const forged = jwt(randomSecret(), { sub: '42', aud: ['catraca-session'], exp: now() + 600, role: 'organizer' });
    const refused = await handler(request({ uri, cookies: { catraca_session: forged } }));
    assert.equal(refused.headers.location.value, '/login?next=' + encodeURIComponent(uri), 'a forged role is no session');
    const ok = await handler(request({ uri, cookies: { catraca_session: session('42', { role: 'organizer' }) } }));
    assert.equal(ok.uri, '/index.html', uri);
  }
  assert.equal((await handler(request({ uri: '/organizers' }))).uri, '/index.html', 'only the /organizer tree');
  assert.equal((await handler(request({ uri: '/not-an-organizer' }))).uri, '/index.html', 'the page a fan is sent to is public');
  assert.equal((await handler(request({ uri: '/api/organizer/events' }))).statusCode, 401);
  const api = await handler(request({ uri: '/api/organizer/events', cookies: { catraca_session: session() } }));
  assert.equal(api.uri, '/api/organizer/events', 'the API checks the role itself (it reads the catalog)');
});

test('forged, expired, wrong-audience, alg none and unknown-kid tokens are refused', async () => {
  const { handler } = setup();
  const bad = [
    jwt(randomSecret(), { sub: '42', aud: ['catraca-session'], exp: now() + 600 }),
    session('42', { exp: now() - 1 }),
    admission(7, '42'), // an admission token is not a session
    jwt(sessionKey, { sub: '42', aud: ['catraca-session'], exp: now() + 600 }, { alg: 'none' }),
    jwt(sessionKey, { sub: '42', aud: ['catraca-session'], exp: now() + 600 }, { kid: 'gone' }),
    'not-a-jwt',
    'a.b.c',
  ];
  for (const t of bad) {
    const res = await handler(request({ uri: '/api/me/orders', cookies: { catraca_session: t } }));
    assert.equal(res.statusCode, 401, t);
  }
});

test('a rotated key verifies by kid', async () => {
  const next = randomSecret();
  const { handler } = setup({ 's:k2': next.toString('base64') });
  const t = jwt(next, { sub: '42', aud: ['catraca-session'], exp: now() + 600 }, { kid: 'k2' });
  assert.equal((await handler(request({ uri: '/api/me/orders', cookies: { catraca_session: t } }))).uri, '/api/me/orders');
});

test('holds on a gated event need an admission token for that event and account', async () => {
  const { handler } = setup();
  const hold = (o) => handler(request({ method: 'POST', uri: '/api/events/7/holds', ...o }));
  const s = { catraca_session: session('42') };

  const none = await hold({ cookies: s });
  assert.equal(none.statusCode, 403);
  assert.equal(body(none).queue, '/api/events/7/queue');

  for (const t of [admission(8, '42'), admission(7, '43'), admission(7, '42', { exp: now() - 5 })]) {
    assert.equal((await hold({ cookies: { ...s, catraca_admission_7: t } })).statusCode, 403);
  }
  assert.equal((await hold({ cookies: { ...s, catraca_admission_7: admission() } })).uri, '/api/events/7/holds');
  assert.equal((await hold({ cookies: s, headers: { 'X-Admission-Token': admission() } })).uri, '/api/events/7/holds');
  // Another event's cookie, and the old single cookie, do not count.
  assert.equal((await hold({ cookies: { ...s, catraca_admission_8: admission() } })).statusCode, 403);
  assert.equal((await hold({ cookies: { ...s, catraca_admission: admission() } })).statusCode, 403);
  // A valid token of another event first does not hide the right one.
  const both = await hold({ cookies: { ...s, catraca_admission_7: admission(8) }, headers: { 'X-Admission-Token': admission() } });
  assert.equal(both.uri, '/api/events/7/holds');
});

test('a browser admitted to two rooms holds at both, each with its own cookie', async () => {
  const { handler } = setup({ 'room:8': '1' });
  const cookies = { catraca_session: session(), catraca_admission_7: admission(7), catraca_admission_8: admission(8) };
  for (const id of [7, 8]) {
    for (const uri of [`/api/events/${id}/holds`, `/events/${id}/book`]) {
      const res = await handler(request({ method: uri.startsWith('/api') ? 'POST' : 'GET', uri, cookies }));
      assert.ok(!res.statusCode, uri + ' passes');
    }
  }
});

test('problems made at the edge name the request, like the API\'s', async () => {
  const { handler } = setup();
  for (const [method, uri, cookies, status] of [['GET', '/api/me/orders', {}, 401],
    ['POST', '/api/events/7/holds', { catraca_session: session() }, 403], ['GET', '/api/nope', {}, 404]]) {
    const res = await handler(request({ method, uri, cookies }));
    assert.equal(res.statusCode, status);
    assert.equal(body(res).instance, uri);
    assert.equal(body(res).request_id, 'test');
  }
});

test('events without a waiting room sell with a session alone', async () => {
  const { handler } = setup();
  const res = await handler(request({ method: 'POST', uri: '/api/events/8/holds', cookies: { catraca_session: session() } }));
  assert.equal(res.uri, '/api/events/8/holds');
});

test('the booking page of a gated event sends the fan to the waiting room', async () => {
  const { handler } = setup();
  const res = await handler(request({ uri: '/events/7/book', cookies: { catraca_session: session() } }));
  assert.equal(res.statusCode, 302);
  assert.equal(res.headers.location.value, '/events/7/queue');
  const admitted = await handler(request({ uri: '/events/7/book', cookies: { catraca_session: session(), catraca_admission_7: admission() } }));
  assert.equal(admitted.uri, '/index.html');
  const anon = await handler(request({ uri: '/events/7/book' }));
  assert.equal(anon.headers.location.value, '/login?next=' + encodeURIComponent('/events/7/book'));
});

test('a store that cannot answer gates closed, never open', async () => {
  const store = kvsStore({ 's:k1': sessionKey.toString('base64') });
  store.exists = async () => { throw new Error('store unavailable'); };
  const handler = load(store);
  const res = await handler(request({ method: 'POST', uri: '/api/events/8/holds', cookies: { catraca_session: session() } }));
  assert.equal(res.statusCode, 403);
});

test('ids are canonical: /api/events/01/holds is a 404, never an ungated room:01', async () => {
  const { handler } = setup();
  const cookies = { catraca_session: session() };
  for (const uri of ['/api/events/07/holds', '/api/events/+7/holds', '/api/events/7.0/holds', '/api/events/0/queue',
    '/api/holds/09', '/api/orders/1e3', '/api/venues/1/layouts/01', '/api/events/99999999999999999999']) {
    const res = await handler(request({ method: 'POST', uri, cookies }));
    assert.equal(res.statusCode, 404, uri);
    assert.equal(body(res).type, 'https://catraca.dev/problems/not-found', uri);
  }
  const gated = await handler(request({ method: 'POST', uri: '/api/events/7/holds', cookies }));
  assert.equal(gated.statusCode, 403, 'the canonical id is gated');
  assert.equal((await handler(request({ uri: '/api/venues/3/layouts/2' }))).uri, '/api/venues/3/layouts/2');
});

test('/healthz reaches the API, not the web app', async () => {
  const { handler } = setup();
  assert.equal((await handler(request({ uri: '/healthz' }))).uri, '/healthz');
  for (const method of ['POST', 'DELETE']) {
    const res = await handler(request({ method, uri: '/healthz' }));
    assert.equal(res.statusCode, 405, method + ' /healthz is read-only, not a log-in prompt');
  }
});

test('writes to pages and files are 405 problem JSON', async () => {
  const { handler } = setup();
  for (const [method, uri] of [['POST', '/index.html'], ['PUT', '/app/api.js'], ['DELETE', '/events/7'], ['POST', '/']]) {
    const res = await handler(request({ method, uri }));
    assert.equal(res.statusCode, 405, method + ' ' + uri);
    assert.equal(res.headers.allow.value, 'GET, HEAD');
    assert.equal(body(res).status, 405);
  }
});

test('non-canonical API paths are 404 problem JSON, not a redirect elsewhere', async () => {
  const { handler } = setup();
  for (const uri of ['/api//events', '/api/./events', '/api/events/7/../../me/orders', '/api/events/..', '/api/events/.']) {
    const res = await handler(request({ uri }));
    assert.equal(res.statusCode, 404, uri);
    assert.equal(res.headers['content-type'].value, 'application/problem+json', uri);
  }
});
