package tools

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFunctionsShipNoTooling keeps every Lambda's import graph free of the
// development tools, so a simulator or a test server never reaches AWS.
func TestFunctionsShipNoTooling(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../functions/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	var functions int
	for _, p := range pkgs {
		if strings.Contains(p, "/catraca/functions/") {
			functions++
		}
		if strings.Contains(p, "/catraca/tools") {
			t.Errorf("a function imports the tooling package %s", p)
		}
	}
	if functions < 8 {
		t.Fatalf("go list saw %d functions, want the 8 Lambdas: %v", functions, pkgs)
	}
}
