// Page changes for the pages: navigate and requireLogin, handed over by the
// router when it starts. Pages import this module, never router.js, which
// loads the pages: no page imports the module that imports it, so the app
// has no import circle (edge/test/imports.test.mjs checks).
let go = null;

// setNavigator is the router's: how a path becomes the page drawn.
export function setNavigator(fn) {
  go = fn;
}

export function navigate(path, { replace = false } = {}) {
  if (!go) throw new Error('navigate before the router started');
  go(path, { replace });
}

export function requireLogin() {
  navigate('/login?next=' + encodeURIComponent(location.pathname + location.search), { replace: true });
}
