// catraca viewer-request function (CloudFront Functions, cloudfront-js-2.0).
// Checks session and admission JWTs (HS256, keys by kid in the KeyValueStore)
// before a request costs an origin call, sends gated events to the waiting
// room, keeps cache keys clean and maps app pages to /index.html.
// Keep it under 10 KB: edge/test fails the build otherwise.
import cf from 'cloudfront';
import crypto from 'crypto';

const kvs = cf.kvs();

// Tracking parameters never reach the cache key or the origin.
const TRACKING = /^(utm_.*|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_ga|_gl|ref|igshid)$/i;
const OPEN_WRITES = /^\/api\/(accounts|session|psp\/webhook)$/;
// An id segment the origin reads as a number must be written one way only
// (no 01, +1 or 1.0), so the edge's room:<id> key is the origin's event id.
const ID_SEGMENT = /^\/api\/(?:events|holds|orders|venues)\/([^/]+)(?:\/layouts\/([^/]+))?/;
const CANONICAL = /^[1-9]\d{0,17}$/;

async function handler(event) {
  const r = event.request;
  r.querystring = cleanQuery(r.querystring);
  const uri = r.uri;
  // The API behaviors (edge/behaviors.go): /api/* and /healthz.
  const api = uri.indexOf('/api/') === 0 || uri === '/healthz';
  const read = r.method === 'GET' || r.method === 'HEAD';
  let m;
  let needSession = false;
  let organizer = false;
  let gateEvent = 0;
  if (api) {
    // "//", "/./" and "/../" would reach another route than the one checked.
    if (/\/\/|\/\.\.?(\/|$)/.test(uri)) return problem(404, 'not-found', 'No such endpoint: ' + uri + '.', {});
    if ((m = ID_SEGMENT.exec(uri)) && (!CANONICAL.test(m[1]) || (m[2] !== undefined && !CANONICAL.test(m[2])))) {
      return problem(404, 'not-found', 'No such resource: ids are written as plain numbers, like /api/events/1.', {});
    }
    if ((m = /^\/api\/events\/(\d+)\/holds$/.exec(uri)) && r.method === 'POST') {
      needSession = true;
      gateEvent = m[1];
    } else if (/^\/api\/(me|orders|holds|organizer)\//.test(uri) || /^\/api\/events\/\d+\/queue$/.test(uri)) {
      needSession = true;
    } else if (!read && r.method !== 'OPTIONS' && !OPEN_WRITES.test(uri)) {
      needSession = true;
    }
  }
  if ((!api || uri === '/healthz') && !read) {
    return problem(405, 'method-not-allowed', 'Pages and files are read-only: use GET.', {}, { allow: { value: 'GET, HEAD' } });
  }
  if (!api && uri.lastIndexOf('.') <= uri.lastIndexOf('/')) {
    // An app page: the router in index.html draws it.
    if ((m = /^\/events\/(\d+)\/book$/.exec(uri))) {
      needSession = true;
      gateEvent = m[1];
    } else if (/^\/(orders|events\/\d+\/queue)(\/|$)/.test(uri)) {
      needSession = true;
    } else if (/^\/organizer(\/|$)/.test(uri)) {
      // The console's pages: only an organizer's session (the role is a
      // signed claim; the API checks the catalog's role on every call).
      needSession = organizer = true;
    }
    r.uri = '/index.html';
  }
  if (!needSession) return r;

  const session = await first(tokens(r, 'catraca_session'), 'catraca-session', 's:');
  if (!session || (organizer && session.role !== 'organizer')) {
    return api
      ? problem(401, 'unauthenticated', 'Log in first.', {})
      : redirect('/login?next=' + encodeURIComponent(uri + search(r.querystring)));
  }
  if (gateEvent && (await gated(gateEvent))) {
    const adm = await first(tokens(r, 'catraca_admission', 'x-admission-token'), 'catraca-admission', 'a:');
    if (!adm || String(adm.evt) !== gateEvent || adm.sub !== session.sub) {
      return api
        ? problem(403, 'admission-required', 'This event has a waiting room: join the queue and buy once you are admitted.',
            { queue: '/api/events/' + gateEvent + '/queue' })
        : redirect('/events/' + gateEvent + '/queue');
    }
  }
  return r;
}

// cleanQuery drops tracking parameters and sorts the rest, so one page has
// one cache key whatever order a link put its parameters in.
function cleanQuery(qs) {
  const out = {};
  Object.keys(qs || {}).sort().forEach(function (k) {
    if (!TRACKING.test(k)) out[k] = qs[k];
  });
  return out;
}

function search(qs) {
  const parts = [];
  Object.keys(qs).forEach(function (k) {
    const v = qs[k];
    const values = v.multiValue ? v.multiValue.map(function (x) { return x.value; }) : [v.value];
    values.forEach(function (x) { parts.push(encodeURIComponent(k) + '=' + encodeURIComponent(x)); });
  });
  return parts.length ? '?' + parts.join('&') : '';
}

// tokens lists where a request may carry a token: its cookie, the bearer
// header and (for admission) a dedicated header.
function tokens(r, cookie, header) {
  const out = [];
  const c = r.cookies && r.cookies[cookie];
  if (c && c.value) out.push(c.value);
  const h = r.headers.authorization;
  if (h && /^bearer /i.test(h.value)) out.push(h.value.slice(7).trim());
  if (header && r.headers[header]) out.push(r.headers[header].value);
  return out;
}

async function first(candidates, aud, prefix) {
  for (let i = 0; i < candidates.length; i++) {
    const c = await verify(candidates[i], aud, prefix);
    if (c) return c;
  }
  return null;
}

// verify checks an HS256 JWT: pinned algorithm, key by kid from the store,
// signature, audience, expiry. It returns the claims or null.
async function verify(raw, aud, prefix) {
  const p = raw.split('.');
  if (p.length !== 3) return null;
  let h;
  let c;
  try {
    h = JSON.parse(Buffer.from(p[0], 'base64url').toString());
    c = JSON.parse(Buffer.from(p[1], 'base64url').toString());
  } catch (e) {
    return null;
  }
  if (!h || h.alg !== 'HS256' || typeof h.kid !== 'string' || !/^[\w-]{1,40}$/.test(h.kid)) return null;
  let key;
  try {
    key = await kvs.get(prefix + h.kid);
  } catch (e) {
    return null; // unknown kid
  }
  const sig = crypto.createHmac('sha256', Buffer.from(key, 'base64')).update(p[0] + '.' + p[1]).digest('base64url');
  if (!same(sig, p[2])) return null;
  const now = Date.now() / 1000;
  if (!c || [].concat(c.aud).indexOf(aud) < 0 || !(c.exp > now) || (c.nbf && c.nbf > now + 5)) return null;
  return c;
}

function same(a, b) {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}

async function gated(id) {
  try {
    return await kvs.exists('room:' + id);
  } catch (e) {
    return true; // fail closed: the origin re-checks anyway
  }
}

const REASONS = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed' };

function problem(status, type, detail, extra, headers) {
  const body = { type: 'https://catraca.dev/problems/' + type, title: REASONS[status], status: status, detail: detail };
  Object.keys(extra).forEach(function (k) { body[k] = extra[k]; });
  const h = headers || {};
  h['content-type'] = { value: 'application/problem+json' };
  h['cache-control'] = { value: 'no-store' };
  return { statusCode: status, statusDescription: REASONS[status], headers: h, body: { encoding: 'text', data: JSON.stringify(body) } };
}

function redirect(to) {
  return {
    statusCode: 302,
    statusDescription: 'Found',
    headers: { location: { value: to }, 'cache-control': { value: 'no-store' } },
  };
}
