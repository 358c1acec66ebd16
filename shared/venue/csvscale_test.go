package venue

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/reject"
)

// seatList is a one-section seat list of n lines, each seat in a row of
// its own: the shape that made every seat search its section's rows.
func seatList(n int) string {
	var b strings.Builder
	b.WriteString("section,row,seat,x,y,price_level\n")
	for i := range n {
		fmt.Fprintf(&b, "S,R%d,1,%d,%d,A\n", i, i%1000, i/1000)
	}
	return b.String()
}

// parseCPU is the CPU time parsing src takes: on a machine busy with
// other work, wall time mostly measures the wait for a core.
func parseCPU(t *testing.T, src string) time.Duration {
	runtime.GC() // no collection left over from the list's building
	before := cpuTime(t)
	if _, err := parseUncapped(strings.NewReader(src)); err != nil {
		t.Fatal(err)
	}
	return cpuTime(t) - before
}

// cpuTime is the CPU time this process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The parse takes time in proportion to the lines, whatever their shape:
// four times the lines cost about four times the time (a search through
// the section's rows made it 28 times). Compared by ratio, not by absolute
// time, in CPU time, each size at its least of rounds that alternate
// them, so a loaded machine does not fail it.
func TestFromCSVIsLinearInRows(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 300,000 lines")
	}
	smallList, largeList := seatList(20_000), seatList(80_000)
	small, large := time.Duration(1<<62), time.Duration(1<<62)
	for range 3 {
		small, large = min(small, parseCPU(t, smallList)), min(large, parseCPU(t, largeList))
	}
	ratio := float64(large) / float64(small)
	t.Logf("CPU time: 20,000 lines %v, 80,000 lines %v: ratio %.1f", small, large, ratio)
	if ratio > 10 { // linear is 4 to 6 (maps grow, caches miss), quadratic 16 and up
		t.Errorf("4x the lines took %.1fx the time (20,000: %v, 80,000: %v): the parse is not linear", ratio, small, large)
	}
}

// parseUncapped parses without the caps, so the lines are all read.
func parseUncapped(r *strings.Reader) (Layout, error) {
	return fromCSV(r, "T", "C", caps{1 << 30, 1 << 30, 1 << 30, 1 << 30})
}

// oneSection is a seat list of section S with rows×seats seats.
func oneSection(rows, seats int) string {
	var b strings.Builder
	b.WriteString("section,row,seat,x,y,price_level\n")
	for r := range rows {
		for s := range seats {
			fmt.Fprintf(&b, "S,R%d,%d,%d,%d,A\n", r, s+1, s, r)
		}
	}
	return b.String()
}

// A list past a cap is refused on the first line past it, and the parse
// stops there: the lines after it are not read.
func TestFromCSVRefusesWhatPassesACap(t *testing.T) {
	sections := strings.Builder{}
	sections.WriteString("section,row,seat,x,y,price_level\n")
	for i := range config.LayoutMaxSections + 5 {
		fmt.Fprintf(&sections, "S%d,A,1,%d,1,A\n", i, i%1000)
	}
	for _, c := range []struct {
		name, src string
		limit     caps
		want      LineError
	}{
		{"rows", oneSection(config.LayoutMaxSectionRows+5, 1), layoutCaps,
			LineError{config.LayoutMaxSectionRows + 2, "row", "section S already has 500 rows, the most a section holds: split it into sections"}},
		{"seats in a row", oneSection(1, config.LayoutMaxRowSeats+5), layoutCaps,
			LineError{config.LayoutMaxRowSeats + 2, "seat", "section S row R0 already has 500 seats, the most a row holds"}},
		{"sections", sections.String(), layoutCaps,
			LineError{config.LayoutMaxSections + 2, "section", "a layout holds at most 1000 sections"}},
		// The seat cap, lowered to keep the test small.
		{"seats", oneSection(3, 3), caps{seats: 4, sections: 9, rows: 9, rowSeats: 9},
			LineError{6, "seat", "a layout holds at most 4 seats"}},
	} {
		_, err := fromCSV(strings.NewReader(c.src), "Arena", "Recife", c.limit)
		var ce *CSVError
		if !errors.As(err, &ce) || len(ce.Lines) != 1 || ce.Lines[0] != c.want {
			t.Errorf("%s: got %v, want only %+v", c.name, err, c.want)
		}
	}
}

// The caps fit the largest stadiums, and JSON layouts are held to them too.
func TestLayoutCapsFitTheLargestStadiums(t *testing.T) {
	big := Stadium("Narendra Modi Stadium", "Ahmedabad", 132_000, 1)
	if err := big.Validate(); err != nil {
		t.Fatalf("a %d-seat stadium was refused: %v", big.SeatCount(), err)
	}
	var sb strings.Builder
	sb.WriteString("section,row,seat,x,y,price_level\n")
	for _, s := range big.Sections {
		for _, r := range s.Rows {
			for _, st := range r.Seats {
				fmt.Fprintf(&sb, "%s,%s,%d,%g,%g,%s\n", s.Code, r.Label, st.Number, st.X, st.Y, s.PriceLevel)
			}
		}
	}
	if l, err := FromCSV(strings.NewReader(sb.String()), big.Name, big.City); err != nil || l.SeatCount() != big.SeatCount() {
		t.Fatalf("its seat list: %d seats, %v", l.SeatCount(), err)
	}

	long := Layout{Name: "Long", City: "Recife", Width: 100, Height: 100,
		Sections: []Section{{Code: "S", Kind: "seated", PriceLevel: "A"}}}
	for r := range config.LayoutMaxSectionRows + 1 {
		long.Sections[0].Rows = append(long.Sections[0].Rows, Row{Label: fmt.Sprint(r), Seats: []Seat{{Number: 1}}})
	}
	long.Sections[0].Rows[0].Seats = make([]Seat, config.LayoutMaxRowSeats+1)
	for i := range long.Sections[0].Rows[0].Seats {
		long.Sections[0].Rows[0].Seats[i].Number = i
	}
	var r *reject.Error
	if err := long.Validate(); !errors.As(err, &r) {
		t.Fatalf("want a layout refusal, got %v", err)
	}
	want := []reject.Reason{
		{Pointer: "/sections/0/rows", Detail: "Section S has 501 rows: a section holds at most 500; split it into sections."},
		{Pointer: "/sections/0/rows/0/seats", Detail: "Section S row 0 has 501 seats: a row holds at most 500."},
	}
	if fmt.Sprint(r.Reasons) != fmt.Sprint(want) {
		t.Fatalf("reasons:\n got %v\nwant %v", r.Reasons, want)
	}
}
