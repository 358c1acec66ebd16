// The check a risky join must pass before it gets a place in line (a 428
// challenge-required from the join): a proof-of-work solved in a Web Worker,
// so the page stays responsive, then sent back with the join.
// docs/fairness.md explains when it is asked and how hard it is.

// solve answers a challenge: { challenge, solution } for the join's body.
// The time it took is kept as the measure "catraca:challenge" (detail: bits,
// tries), which the browser tests read.
export function solve(c) {
  if (c.kind !== 'pow') {
    return Promise.reject(new Error('This check is not available in this page; reload it to try again.'));
  }
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./pow-worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = ({ data }) => {
      worker.terminate();
      performance.measure('catraca:challenge', { start, end: performance.now(), detail: { bits: c.bits, tries: data.tries, worker_ms: data.ms } });
      resolve({ challenge: c.token, solution: data.nonce });
    };
    worker.onerror = (err) => {
      worker.terminate();
      reject(err);
    };
    worker.postMessage({ token: c.token, bits: c.bits });
  });
}
