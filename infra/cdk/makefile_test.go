package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// TestCDKTargetsBuildFirst: every make target that runs the CDK CLI
// synthesizes the app, and the app refers to dist/<function>/bootstrap,
// so on a fresh clone it panics ("Cannot find asset at …/api") unless the
// target builds first.
func TestCDKTargetsBuildFirst(t *testing.T) {
	rules := makeRules(t, filepath.Join(testenv.RepoRoot(), "Makefile"))
	checked := 0
	for target, r := range rules {
		if strings.HasPrefix(target, "$(") || !r.runsCDK() {
			continue // the CLI's own install rule
		}
		checked++
		require.Contains(t, r.prereqs, "build", "make %s runs the CDK, which needs the functions built: it must depend on build", target)
	}
	require.GreaterOrEqual(t, checked, 4, "synth, bootstrap, deploy and localstack-deploy run the CDK")
}

type rule struct {
	prereqs []string
	recipe  []string
}

func (r rule) runsCDK() bool {
	return slices.ContainsFunc(r.recipe, func(l string) bool {
		return strings.Contains(l, "$(CDK)") || strings.Contains(l, "$(CDKLOCAL)")
	})
}

// makeRules reads the explicit rules of a Makefile: target, prerequisites
// (before a "##" help comment), recipe lines.
func makeRules(t *testing.T, path string) map[string]rule {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rules := map[string]rule{}
	var current string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") {
			if current != "" {
				r := rules[current]
				r.recipe = append(r.recipe, line)
				rules[current] = r
			}
			continue
		}
		current = ""
		head, _, _ := strings.Cut(line, "##")
		target, prereqs, ok := strings.Cut(head, ":")
		if !ok || strings.Contains(target, "=") || strings.HasPrefix(prereqs, "=") || strings.HasPrefix(target, ".") || strings.HasPrefix(line, "#") {
			continue
		}
		current = strings.TrimSpace(target)
		rules[current] = rule{prereqs: strings.Fields(prereqs)}
	}
	require.NoError(t, sc.Err())
	return rules
}
