// The waiting room's proof-of-work, solved off the page's main thread: find
// a decimal nonce such that SHA-256(token ":" nonce) starts with `bits` zero
// bits (shared/challenge, Algorithm). SHA-256 is written out here because
// crypto.subtle answers each digest through a promise, which costs more than
// the hash of two blocks; the token's first whole blocks are hashed once
// (the midstate) and each try hashes only the last one or two.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const W = new Uint32Array(64);

// compress hashes the 64-byte block of `bytes` at `off` into state H.
function compress(H, bytes, off) {
  for (let i = 0; i < 16; i++) {
    const j = off + i * 4;
    W[i] = (bytes[j] << 24) | (bytes[j + 1] << 16) | (bytes[j + 2] << 8) | bytes[j + 3];
  }
  for (let i = 16; i < 64; i++) {
    const a = W[i - 15], b = W[i - 2];
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
  }
  H[0] = (H[0] + a) | 0; H[1] = (H[1] + b) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
  H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + h) | 0;
}

// zeros counts the leading zero bits of a digest state.
function zeros(H) {
  let n = 0;
  for (let i = 0; i < 8; i++) {
    if (H[i] !== 0) return n + Math.clz32(H[i]);
    n += 32;
  }
  return n;
}

export function solve(token, bits) {
  const prefix = new TextEncoder().encode(`${token}:`);
  const whole = prefix.length - (prefix.length % 64);
  const mid = new Int32Array(IV);
  for (let off = 0; off < whole; off += 64) compress(mid, prefix, off);
  const rest = prefix.length - whole;
  const tail = new Uint8Array(128);
  tail.set(prefix.subarray(whole));
  const H = new Int32Array(8);
  for (let nonce = 0; ; nonce++) {
    const digits = String(nonce);
    let n = rest;
    for (let i = 0; i < digits.length; i++) tail[n++] = digits.charCodeAt(i);
    const len = whole + n; // message bytes
    tail[n++] = 0x80;
    const blocks = n + 8 <= 64 ? 1 : 2;
    tail.fill(0, n, blocks * 64 - 4);
    const bitLen = len * 8; // under 2^32: tokens are short
    const end = blocks * 64;
    tail[end - 4] = bitLen >>> 24; tail[end - 3] = (bitLen >>> 16) & 255; tail[end - 2] = (bitLen >>> 8) & 255; tail[end - 1] = bitLen & 255;
    H.set(mid);
    compress(H, tail, 0);
    if (blocks === 2) compress(H, tail, 64);
    if (zeros(H) >= bits) return { nonce: digits, tries: nonce + 1 };
  }
}

// In a worker: one message { token, bits } in, one { nonce, tries, ms } out.
if (typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope) {
  self.onmessage = ({ data }) => {
    const start = performance.now();
    const found = solve(data.token, data.bits);
    self.postMessage({ ...found, ms: performance.now() - start });
  };
}
