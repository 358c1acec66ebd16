// A small key-value store in IndexedDB for what a door keeps offline: a
// stadium's scan bundle (~157 bytes a ticket) outgrows localStorage's ~5 MB.
const opened = new Promise((resolve, reject) => {
  const req = indexedDB.open('catraca', 1);
  req.onupgradeneeded = () => req.result.createObjectStore('kv');
  req.onsuccess = () => resolve(req.result);
  req.onerror = () => reject(req.error);
});

// run performs one request in its own transaction and settles when that
// transaction commits, so a saved value survives a reload right after.
function run(mode, op) {
  return opened.then((db) => new Promise((resolve, reject) => {
    const tx = db.transaction('kv', mode);
    const req = op(tx.objectStore('kv'));
    tx.oncomplete = () => resolve(req.result);
    tx.onerror = tx.onabort = () => reject(tx.error);
  }));
}

export const get = (key) => run('readonly', (s) => s.get(key));
export const set = (key, value) => run('readwrite', (s) => s.put(value, key));
