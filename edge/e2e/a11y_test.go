package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// axeSource is axe-core as npm installs it from edge/package.json (make
// test-browser runs npm ci). The app's CSP refuses script tags, so the
// tests evaluate the source in the page instead.
var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "edge", "node_modules", "axe-core", "axe.min.js"))
	return string(b), err
})

// axeRun returns the page's accessibility violations, one line each.
const axeRun = `(async () => {
  const r = await axe.run(document, { resultTypes: ['violations'] });
  return JSON.stringify(r.violations.map((v) => v.id + ' (' + v.impact + '): ' + v.help + ' — ' +
    v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')));
})()`

// shownHidden lists elements marked hidden that a style rule still shows
// (a display rule beats the hidden attribute's user-agent style).
const shownHidden = `[...document.querySelectorAll('[hidden]')]
  .filter((e) => getComputedStyle(e).display !== 'none')
  .map((e) => e.outerHTML.slice(0, 100))`

// accessible fails the test on any axe-core violation of the page as it is
// now, at desktop and at phone size, and on any hidden element still on
// show; the viewport is left as it was found when the page was on a desktop.
func accessible(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	require.Empty(t, evaluate[[]string](t, ctx, shownHidden), "hidden elements shown on %s", page)
	src, err := axeSource()
	require.NoError(t, err, "axe-core is missing: run make test-browser (npm ci in edge/)")
	width := evaluate[int](t, ctx, `window.innerWidth`)
	sizes := []struct {
		name string
		set  chromedp.Action[chromedp.Void]
	}{
		{"desktop", chromedp.EmulateViewport(1280, 900)},
		{"phone", phoneViewport},
	}
	if width >= 800 { // a desktop test: end at desktop size
		sizes[0], sizes[1] = sizes[1], sizes[0]
	}
	// axe judges the settled page: an element mid-fade (a toast's opacity
	// transition) reads as low contrast depending on when the scan lands.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](settle, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	for _, size := range sizes {
		require.NoError(t, chromedp.Do(ctx, size.set))
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`window.axe ? 0 : (0, eval)(`+strconvQuote(src)+`)`))
		require.NoError(t, err)
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](axeRun, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		var violations []string
		require.NoError(t, json.Unmarshal([]byte(out), &violations))
		require.Empty(t, violations, "axe-core on %s at %s size:\n%s", page, size.name, strings.Join(violations, "\n"))
	}
	if width >= 800 {
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// settle finishes every running CSS transition and animation (their end
// state) and makes the toast change state at once from now on: its hide
// timer may fire during the scan, and a half-faded toast reads as low
// contrast. (Through the CSSOM: the page's CSP refuses an injected style.)
const settle = `(() => {
  const toast = document.getElementById('toast');
  if (toast) toast.style.transition = 'none';
  document.getAnimations().forEach((a) => a.finish());
  return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))));
})()`
