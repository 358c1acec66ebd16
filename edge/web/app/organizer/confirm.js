// confirm asks before a console action takes effect, in a modal <dialog>
// (focus moves in and back, Escape cancels); it resolves true when the
// organizer confirms. A warning (a value that looks like a slip) is shown
// above the text and read with it.
import { h } from '../dom.js';

let seq = 0;

export function confirm({ title, text, action, danger = false, warning = '' }) {
  const id = `confirm-${++seq}`;
  return new Promise((resolve) => {
    const back = document.activeElement;
    const cancel = h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('cancel') }, 'Cancel');
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': id + '-t', 'aria-describedby': (warning ? id + '-w ' : '') + id + '-d' },
      h('h2', { id: id + '-t' }, title),
      warning ? h('p', { id: id + '-w', class: 'notice bad' }, warning) : null,
      h('p', { id: id + '-d' }, text),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: danger ? 'danger' : '', onclick: () => dialog.close('ok') }, action),
        cancel));
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (back && back.focus) back.focus();
      resolve(dialog.returnValue === 'ok');
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus(); // the safe choice first
  });
}
