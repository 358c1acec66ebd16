// The page's proof-of-work solver (web/app/pow-worker.js) agrees with
// Node's SHA-256 for tokens that end anywhere in a block: its nonce is the
// first that reaches the bits, as the Go solver (challenge.Solve) finds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { solve } from '../web/app/pow-worker.js';

const zeroBits = (buf) => {
  let n = 0;
  for (const c of buf) {
    if (c) return n + Math.clz32(c) - 24;
    n += 8;
  }
  return n;
};
const bitsOf = (token, nonce) => zeroBits(createHash('sha256').update(`${token}:${nonce}`).digest());

test('the solver finds the first nonce with enough leading zero bits', () => {
  for (const token of ['a', 'x'.repeat(54), 'y'.repeat(55), 'z'.repeat(63), 'w'.repeat(64), 'v'.repeat(119), 'MS43LjQyLjE5.c2ln']) {
    const { nonce, tries } = solve(token, 10);
    assert.ok(bitsOf(token, nonce) >= 10, `${token.length} bytes: ${nonce}`);
    let first = 0;
    while (bitsOf(token, first) < 10) first++;
    assert.equal(nonce, String(first), `${token.length} bytes`);
    assert.equal(tries, first + 1);
  }
});
