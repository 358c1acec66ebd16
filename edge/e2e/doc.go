// Package e2e drives the web app in real headless Chromium against the whole
// local stack (gateway with the real edge function, API, workers, PSP
// simulator, PostgreSQL and Redis). Screenshots land in
// $CATRACA_ARTIFACTS (default: a temporary folder); -update-docs also
// copies a few into docs/.
package e2e
