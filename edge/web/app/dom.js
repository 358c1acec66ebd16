// Tiny DOM helpers: h() builds elements, toast() announces to everyone
// (the notice area is an ARIA live region).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'style') Object.assign(el.style, v); // CSSOM: allowed by the CSP, unlike style=""
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
export function s(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

// A toast stays 6 s; a greeting (ms) shorter, as it says nothing to act on
// and lies over the first screen.
let timer;
export function toast(text, kind = 'info', ms = 6000) {
  const t = document.getElementById('toast');
  t.className = 'show ' + kind;
  t.textContent = text;
  clearTimeout(timer);
  timer = setTimeout(() => (t.className = ''), ms);
}

// field is a labelled input.
export function field(label, attrs) {
  const id = 'f-' + attrs.name;
  return h('p', { class: 'field' }, h('label', { for: id }, label), h('input', { id, ...attrs }));
}
