// Runs edge/function/viewer-request.js the way CloudFront Functions does:
// the 'cloudfront' and 'crypto' modules provided, no require, no network,
// and a KeyValueStore whose get() rejects for a missing key.
import { readFileSync } from 'node:fs';
import { createHmac, webcrypto } from 'node:crypto';
import vm from 'node:vm';

export const functionPath = new URL('../function/viewer-request.js', import.meta.url);

export function kvsStore(entries = {}) {
  const m = new Map(Object.entries(entries));
  return {
    map: m,
    get: async (key, opts) => {
      if (!m.has(key)) throw new Error('KeyValueStore: key not found: ' + key);
      const v = m.get(key);
      return opts && opts.format === 'json' ? JSON.parse(v) : v;
    },
    exists: async (key) => m.has(key),
    meta: async () => ({ keyCount: m.size }),
  };
}

// load evaluates the function source with its module imports bound to the
// CloudFront runtime stand-ins and returns its handler.
export function load(store) {
  const src = readFileSync(functionPath, 'utf8');
  const body = src
    .replace(/^import cf from 'cloudfront';$/m, '')
    .replace(/^import crypto from 'crypto';$/m, '');
  const ctx = vm.createContext({
    cf: { kvs: () => store },
    crypto: { createHmac },
    Buffer,
    console,
  });
  vm.runInContext(body, ctx, { filename: 'viewer-request.js' });
  return ctx.handler;
}

// request builds a viewer-request event shaped like CloudFront's.
export function request({ method = 'GET', uri = '/', query = {}, headers = {}, cookies = {} } = {}) {
  const qs = {};
  for (const [k, v] of Object.entries(query)) {
    qs[k] = Array.isArray(v) ? { value: v[0], multiValue: v.map((value) => ({ value })) } : { value: v };
  }
  const hs = {};
  for (const [k, v] of Object.entries(headers)) hs[k.toLowerCase()] = { value: v };
  const cs = {};
  for (const [k, v] of Object.entries(cookies)) cs[k] = { value: v };
  return {
    version: '1.0',
    context: { distributionDomainName: 'd111111abcdef8.cloudfront.net', eventType: 'viewer-request', requestId: 'test' },
    viewer: { ip: '198.51.100.7' },
    request: { method, uri, querystring: qs, headers: hs, cookies: cs },
  };
}

const b64url = (b) => Buffer.from(b).toString('base64url');

// jwt signs an HS256 token like shared/token does.
export function jwt(secret, claims, { kid = 'k1', alg = 'HS256' } = {}) {
  const head = b64url(JSON.stringify({ alg, kid, typ: 'JWT' }));
  const body = b64url(JSON.stringify(claims));
  const sig = alg === 'none' ? '' : createHmac('sha256', secret).update(head + '.' + body).digest('base64url');
  return head + '.' + body + '.' + sig;
}

export const randomSecret = () => Buffer.from(webcrypto.getRandomValues(new Uint8Array(32)));
