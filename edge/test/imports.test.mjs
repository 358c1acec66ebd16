// The web app's modules import one another without a circle: the router
// loads the pages, so a page that imported the router back (for navigate)
// tied every page into one knot. Static imports and dynamic import() both
// count: a dynamic one still makes the importer depend on the module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const app = resolve(dirname(fileURLToPath(import.meta.url)), '../web/app');

function modules(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []);
}

// imports lists the relative modules a source imports, statically
// (import … from, export … from, bare import) or dynamically (import()).
export function imports(file, source) {
  const found = new Set();
  const patterns = [/\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/g, /\bimport\s*['"](\.{1,2}\/[^'"]+)['"]/g, /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g];
  for (const re of patterns) for (const m of source.matchAll(re)) found.add(resolve(dirname(file), m[1]));
  return [...found];
}

// cycle returns one import circle of the graph as module names, or null.
export function cycle(graph) {
  const state = new Map(); // module → 1 while on the path, 2 when done
  const path = [];
  const visit = (m) => {
    state.set(m, 1);
    path.push(m);
    for (const n of graph.get(m) || []) {
      if (state.get(n) === 1) return [...path.slice(path.indexOf(n)), n];
      if (!state.has(n)) {
        const c = visit(n);
        if (c) return c;
      }
    }
    path.pop();
    state.set(m, 2);
    return null;
  };
  for (const m of graph.keys()) {
    if (state.has(m)) continue;
    const c = visit(m);
    if (c) return c.map((f) => relative(app, f));
  }
  return null;
}

test('cycle finds a circle through a dynamic import and none in a line', () => {
  const g = new Map([[join(app, 'router.js'), [join(app, 'home.js')]], [join(app, 'home.js'), [join(app, 'nav.js')]], [join(app, 'nav.js'), []]]);
  assert.equal(cycle(g), null);
  const src = "import { navigate } from './router.js';\nconst p = () => import('./book.js');";
  assert.deepEqual(imports(join(app, 'home.js'), src), [join(app, 'router.js'), join(app, 'book.js')]);
  g.get(join(app, 'nav.js')).push(join(app, 'router.js'));
  assert.deepEqual(cycle(g), ['router.js', 'home.js', 'nav.js', 'router.js']);
});

test('the web app has no import circle', () => {
  const files = modules(app);
  const graph = new Map(files.map((f) => [f, imports(f, readFileSync(f, 'utf8'))]));
  for (const [f, deps] of graph) {
    for (const d of deps) assert.ok(graph.has(d), `${relative(app, f)} imports ${relative(app, d)}, which does not exist`);
  }
  const c = cycle(graph);
  assert.equal(c, null, c && `import circle: ${c.join(' → ')}`);
});
