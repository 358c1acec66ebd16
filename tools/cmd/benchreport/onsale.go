package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/catraca/catraca/tools/onsale"
)

// onsaleSummary runs the on-sale simulator (report in docs/onsale/) with
// the Aurora-like commit delay (µs, 0: local commits) and adds its headline
// figures, each beside its reference from the same run.
func onsaleSummary(b *strings.Builder, fans, delay int) error {
	dir := filepath.Join("docs", "onsale")
	cmd := exec.Command("go", "run", "./tools/cmd/onsale", "-fans", fmt.Sprint(fans), "-commit-delay", fmt.Sprint(delay), "-out", dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("on-sale simulation: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "onsale.json"))
	if err != nil {
		return err
	}
	var rep onsale.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return err
	}
	hold := rep.Latency["hold"]
	fmt.Fprintf(b, "\n## On-sale simulation (%d fans, %d tickets, ceiling %d)\n\nCommits: %s. Full report: [onsale/onsale.md](onsale/onsale.md).\n\n| figure | this run | reference | ratio |\n|---|---:|---:|---:|\n",
		rep.Options.Fans, rep.Tickets, rep.Options.Ceiling, rep.Commits())
	if rep.TheoreticalMin > 0 {
		fmt.Fprintf(b, "| draw to sold out, what a fan feels, vs theoretical minimum (tickets ÷ admission throughput) | %.1f s | %.1f s | %.2f× |\n",
			rep.DrawToSoldOut(), rep.TheoreticalMin, rep.DrawToSoldOut()/rep.TheoreticalMin)
		fmt.Fprintf(b, "| admission start to sold out vs theoretical minimum (target ≤ 1.2×) | %.1f s | %.1f s | %.2f× |\n",
			rep.SellOutSeconds, rep.TheoreticalMin, rep.SellOutSeconds/rep.TheoreticalMin)
	}
	fmt.Fprintf(b, "| hold p99 vs target 50 ms | %.1f ms | 50 ms | %.2f× |\n", hold.P99, hold.P99/50)
	fmt.Fprintf(b, "| origin queue requests per waiting fan per minute vs target 1 | %.2f | 1 | %.2f× |\n", rep.OriginPerFan, rep.OriginPerFan)
	fmt.Fprintf(b, "| tickets sold | %d | %d | |\n| invariant violations | %d | 0 | |\n", rep.Sold, rep.Tickets, len(rep.Violations))
	return nil
}
