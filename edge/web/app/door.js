// The door: door staff scan fans' codes (camera where the browser has a
// BarcodeDetector, typing or a USB scanner otherwise) and get a full-screen
// green or red answer. With the event's scan bundle downloaded, the page
// keeps verifying when the network drops (Ed25519 public keys: it can check
// codes, not make them) and syncs its admissions when it returns.
import { api, newKey, session, when } from './api.js';
import { h, toast } from './dom.js';
import { get, set } from './store.js';

const titles = {
  admitted: 'Admitted',
  'already-used': 'Already used',
  'wrong-event': 'Wrong event',
  void: 'Void',
  'not-valid-yet': 'Not valid yet',
  expired: 'Expired code',
  invalid: 'Invalid code',
  conflict: 'Conflict',
  offline: 'Offline',
};

export async function render(main, [id]) {
  const ev = await api('GET', `/api/events/${id}`);
  let stats;
  try {
    stats = await api('GET', `/api/events/${id}/checkins`);
  } catch (err) {
    if (err.status !== 404) throw err;
    return notStaff(main, ev); // 404 unless door staff (or the organizer)
  }
  const key = (k) => `catraca.${k}.${id}`;
  const load = async (k, d) => (await get(key(k))) ?? d;
  // Writes are queued in order by IndexedDB; a failure (storage full) is said.
  const save = (k, v) => set(key(k), v).catch(() => toast('This device has no room left to keep the scan bundle: free some storage, or keep scanning online.', 'bad'));
  let bundle = await load('bundle', null);
  let pending = await load('pending', []);
  let used = await load('used', {}); // ticket id → {gate, at}, what this gate knows offline

  const gate = h('input', { id: 'door-gate', name: 'gate', required: true, maxlength: 40, value: localStorage.getItem('catraca.gate') || 'Gate 1',
    onchange: () => localStorage.setItem('catraca.gate', gate.value) });
  const counts = h('p', { id: 'door-counts', class: 'lead', 'aria-live': 'polite' });
  const offline = h('p', { id: 'door-offline', class: 'small' });
  const conflicts = h('ul', { id: 'door-conflicts' });
  const code = h('input', { id: 'door-code', name: 'code', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false', required: true });
  const verdict = h('div', { class: 'verdict', role: 'alert', hidden: true, onclick: () => dismiss() });
  const camera = h('div', { class: 'camera' });

  function drawStats(st) {
    counts.textContent = `Checked in ${st.checked_in} of ${st.expected} expected`;
    conflicts.replaceChildren(...st.conflicts.map((c) => h('li', {},
      `Ticket ${c.ticket_id}: admitted offline at ${c.gate} (${clock(c.scanned_at)}), but ${c.first_gate} admitted it first (${clock(c.first_at)}).`)));
  }
  function drawOffline() {
    offline.textContent = (bundle ? `Ready for offline scanning: ${bundle.tickets.length} tickets, downloaded ${when(bundle.generated_at)}.` : 'Not ready for offline scanning yet.')
      + (pending.length ? ` ${pending.length} offline scan${pending.length > 1 ? 's' : ''} waiting to sync.` : '');
  }
  async function refresh() {
    try {
      drawStats(await api('GET', `/api/events/${id}/checkins`));
      // Keep a downloaded bundle fresh (transfers, refunds, new sales).
      if (bundle && Date.now() - new Date(bundle.generated_at) > 5 * 60000) await download(true);
    } catch (err) {
      revoked(err); // offline: keep the last counts
    }
  }
  // A 404 means this account no longer works these doors (revoked): the
  // bundle's names and seats leave the device, and so do the unsynced
  // scans, which the server refuses from now on.
  function revoked(err) {
    if (err.status !== 404 || (!bundle && !pending.length)) return;
    bundle = null;
    pending = [];
    used = {};
    save('bundle', null);
    save('pending', pending);
    save('used', used);
    drawOffline();
    toast(err.message, 'bad');
  }

  let hideTimer = null;
  function show(r) {
    const good = r.outcome === 'admitted';
    verdict.className = 'verdict ' + (good ? 'good' : 'bad');
    // The gate's own words for a first use, online as offline: local time,
    // the gate's name once.
    const message = r.outcome === 'already-used' && r.first_at ? usedAt(r.first_at, r.first_gate) : r.message;
    verdict.replaceChildren(h('p', { class: 'big' }, titles[r.outcome] || r.outcome),
      ...[r.name && h('p', {}, r.name), r.seat && h('p', {}, r.seat)].filter(Boolean),
      h('p', { class: 'detail' }, message), h('p', { class: 'small' }, 'Tap to scan the next one'));
    verdict.hidden = false;
    clearTimeout(hideTimer);
    hideTimer = setTimeout(dismiss, good ? 2500 : 6000);
  }
  function dismiss() {
    verdict.hidden = true;
    code.focus();
  }

  async function check(text) {
    const scan = { code: text, gate: gate.value, scan_id: newKey() };
    try {
      show(await api('POST', `/api/events/${id}/checkins`, scan));
      refresh();
    } catch (err) {
      if (err.status !== 0) {
        toast(err.message, 'bad');
        return revoked(err);
      }
      show(bundle ? await verifyOffline(scan) : { outcome: 'offline', message: 'No network and no scan bundle on this device: download it before doors open.' });
    }
  }

  async function verifyOffline(scan) {
    const p = scan.code.trim().toUpperCase().split('.');
    const rotating = p[0] === 'R1' && p.length === 5;
    if (!rotating && !(p[0] === 'S1' && p.length === 4)) return { outcome: 'invalid', message: 'Not a ticket code.' };
    const t = bundle.tickets.find((x) => x.id === Number(p[1]));
    if (!t) return { outcome: 'invalid', message: 'Not in this event\'s bundle: another event, or sold after the download.' };
    const r = { name: t.name, seat: t.seat };
    const gen = Number(p[2]);
    if (gen < t.generation) return { ...r, outcome: 'void', message: 'Void: this ticket was transferred; the old code no longer admits anyone.' };
    if (gen > t.generation) return { ...r, outcome: 'invalid', message: 'Transferred after this gate\'s download: check it online, or download again when the network is back.' };
    if (!(await signed(t.key, `catraca/${p.slice(0, rotating ? 4 : 3).join('/')}`, p[p.length - 1]))) {
      return { outcome: 'invalid', message: 'Forged or outdated code: its signature does not match the ticket.' };
    }
    if (t.void) return { ...r, outcome: 'void', message: `Void: ${t.void}.` };
    if (!rotating && !bundle.static_codes) return { ...r, outcome: 'invalid', message: 'Printed codes are not accepted at this event.' };
    const now = Date.now() + (bundle.skew || 0);
    const step = Math.floor(now / 1000 / bundle.step_seconds);
    if (rotating && Number(p[3]) < step - bundle.tolerance_steps) return { ...r, outcome: 'expired', message: 'Expired code (a screenshot or a frozen screen): ask the fan to reopen the live ticket.' };
    if (rotating && Number(p[3]) > step + 1) return { ...r, outcome: 'not-valid-yet', message: 'Not valid yet: the phone\'s clock is ahead.' };
    if (bundle.doors_open_at && now < new Date(bundle.doors_open_at)) return { ...r, outcome: 'not-valid-yet', message: `Not valid yet: doors open at ${when(bundle.doors_open_at)}.` };
    const first = used[t.id] || (t.used && { gate: 'another gate', at: t.used });
    if (first) return { ...r, outcome: 'already-used', message: usedAt(first.at, first.gate) };
    const at = new Date(now).toISOString();
    used[t.id] = { gate: scan.gate, at };
    pending.push({ ...scan, scanned_at: at });
    save('used', used);
    save('pending', pending);
    drawOffline();
    return { ...r, outcome: 'admitted', message: 'Admitted offline; it syncs when the network is back.' };
  }

  let syncing = false;
  async function sync() {
    if (syncing || !pending.length) return;
    syncing = true;
    try {
      const gateName = pending[0].gate;
      const batch = pending.filter((s) => s.gate === gateName).slice(0, 200);
      const res = await api('POST', `/api/events/${id}/checkins/sync`, { gate: gateName,
        scans: batch.map((s) => ({ scan_id: s.scan_id, code: s.code, scanned_at: s.scanned_at })) }, { retries: 0 });
      const done = new Set(batch.map((s) => s.scan_id));
      pending = pending.filter((s) => !done.has(s.scan_id));
      save('pending', pending);
      const clashes = res.results.filter((r) => r.outcome === 'conflict').length;
      toast(`Synced ${batch.length} offline scan${batch.length > 1 ? 's' : ''}${clashes ? `: ${clashes} conflict${clashes > 1 ? 's' : ''}, see below` : ''}.`, clashes ? 'bad' : 'info');
      drawOffline();
      await refresh();
    } catch (err) {
      revoked(err); // or still offline
    } finally {
      syncing = false;
    }
  }

  async function download(quiet) {
    const started = Date.now();
    const b = await api('GET', `/api/events/${id}/scan-bundle`);
    b.skew = new Date(b.generated_at) - (started + Date.now()) / 2;
    bundle = b;
    // What this gate admitted itself stays known, synced or not.
    used = { ...Object.fromEntries(b.tickets.filter((t) => t.used).map((t) => [t.id, { gate: 'another gate', at: t.used }])), ...used };
    save('bundle', bundle);
    save('used', used);
    drawOffline();
    if (!quiet) toast('Scan bundle downloaded: this gate keeps scanning without network.');
  }

  let stream = null;
  let scanTimer = null;
  async function startCamera() {
    const video = h('video', { playsinline: true, muted: true });
    camera.replaceChildren(video);
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' } });
    } catch (err) {
      camera.replaceChildren(h('p', { class: 'error' }, `No camera: ${err.message}. Type or paste codes below.`));
      return;
    }
    video.srcObject = stream;
    await video.play();
    const detector = new BarcodeDetector({ formats: ['qr_code'] });
    let last = '';
    let lastAt = 0;
    scanTimer = setInterval(async () => {
      if (!verdict.hidden) return;
      const found = await detector.detect(video).catch(() => []);
      const text = found[0]?.rawValue;
      if (!text || (text === last && Date.now() - lastAt < 5000)) return;
      last = text;
      lastAt = Date.now();
      check(text);
    }, 250);
  }
  function stopCamera() {
    clearInterval(scanTimer);
    stream?.getTracks().forEach((t) => t.stop());
  }

  main.append(h('h1', {}, `Door: ${ev.name}`), counts,
    h('p', { class: 'field narrow' }, h('label', { for: 'door-gate' }, 'Gate'), gate),
    'BarcodeDetector' in window
      ? h('p', {}, h('button', { type: 'button', onclick: (e) => { e.target.disabled = true; startCamera(); } }, 'Scan with the camera'))
      : h('p', { class: 'muted' }, 'This browser cannot read QR codes from the camera: type or paste codes below (a USB scanner types them too).'),
    camera,
    h('form', { class: 'inline', onsubmit: (e) => {
      e.preventDefault();
      const text = code.value;
      code.value = '';
      check(text);
    } }, h('p', { class: 'field' }, h('label', { for: 'door-code' }, 'Ticket code'), code), h('button', { type: 'submit' }, 'Check')),
    h('h2', {}, 'Offline'), offline,
    h('p', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => download().catch((err) => toast(err.message, 'bad')) }, 'Download for offline scanning'),
      h('button', { type: 'button', class: 'secondary', onclick: sync }, 'Sync now')),
    h('h2', {}, 'Conflicts'), h('p', { class: 'small muted' }, 'Tickets two offline gates both admitted: the first scan counts; look into the second.'), conflicts,
    // The organizer manages door staff and entry rules in the console.
    ...(stats.settings ? [h('p', { id: 'door-console' }, 'Door staff and entry rules: ',
      h('a', { href: `/organizer/events/${id}` }, `${ev.name} in the console`), '.')] : []),
    verdict);
  drawStats(stats);
  drawOffline();
  const timers = [setInterval(refresh, 10000), setInterval(sync, 3000)];
  window.addEventListener('online', sync);
  code.focus();
  return () => {
    timers.forEach(clearInterval);
    window.removeEventListener('online', sync);
    clearTimeout(hideTimer);
    stopCamera();
  };
}

const clock = (iso) => new Date(iso).toLocaleTimeString('en');

// usedAt says when and where a ticket got in first, in the gate's time.
const usedAt = (at, gate) => `Already used at ${clock(at)}, ${gate}.`;

// notStaff is the door page of an account the organizer has not granted
// (yet): who they are signed in as, what to ask for, and a way to check
// again once granted, instead of "event not found".
function notStaff(main, ev) {
  const me = session.get();
  main.append(h('h1', {}, `Door: ${ev.name}`),
    h('p', { class: 'notice bad', id: 'door-not-staff' }, 'You cannot scan tickets at this event yet.'),
    h('p', {}, `Ask its organizer to add ${me?.email ? me.email : 'the email of your account'} as door staff (Door staff, on the event's page of the console). Then check again here.`),
    h('p', {}, h('button', { type: 'button', onclick: () => location.reload() }, 'Check again')));
}

const b32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
function base32(text) {
  const out = [];
  let bits = 0;
  let value = 0;
  for (const c of text) {
    const v = b32.indexOf(c);
    if (v < 0) return null;
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}

// signed checks an Ed25519 signature with the ticket's public key.
async function signed(keyB64, message, sigB32) {
  const sig = base32(sigB32);
  if (!sig || sig.length !== 64) return false;
  try {
    const key = await crypto.subtle.importKey('raw', Uint8Array.from(atob(keyB64), (c) => c.charCodeAt(0)), { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, sig, new TextEncoder().encode(message));
  } catch {
    return false;
  }
}
