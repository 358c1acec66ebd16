package venue

import (
	"errors"
	"strings"
	"testing"
)

func TestFromCSVBuildsSectionsRowsAndOutlines(t *testing.T) {
	src := "Section,Row,Seat,X,Y,Price level\n" +
		"101,A,1,10,20,A\n101,A,2,15,20,A\n101,B,1,10,25,A\n\n" +
		"102,A,1,40,20,B\n"
	l, err := FromCSV(strings.NewReader(src), "Teatro", "Recife")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	if l.SeatCount() != 4 || len(l.Sections) != 2 || len(l.Sections[0].Rows) != 2 || l.Sections[1].PriceLevel != "B" {
		t.Fatalf("unexpected layout: %+v", l)
	}
	if got := l.Sections[0].Shape; got[0] != [2]int{6, 16} || got[2] != [2]int{19, 29} {
		t.Fatalf("section 101 outline %v", got)
	}
	if l.Width != 48 || l.Height != 33 {
		t.Fatalf("map %dx%d", l.Width, l.Height)
	}
}

// Spreadsheets save "CSV UTF-8" with a byte-order mark before the header.
func TestFromCSVSkipsAByteOrderMark(t *testing.T) {
	l, err := FromCSV(strings.NewReader("\ufeffsection,row,seat,x,y,price_level\n101,A,1,10,20,A\n"), "Teatro", "Recife")
	if err != nil {
		t.Fatal(err)
	}
	if l.SeatCount() != 1 {
		t.Fatalf("seats %d, want 1", l.SeatCount())
	}
}

// Every bad line is reported with its number, so the page can show each
// error beside its line.
func TestFromCSVReportsEveryBadLine(t *testing.T) {
	src := "section,row,seat,x,y,price_level\n" +
		"101,A,1,10,20,A\n" +
		"101,A,one,10,20,A\n" + // line 3: seat
		"101,A,1,12,20,A\n" + // line 4: duplicate of line 2
		"101,B,2,-1,20,A\n" + // line 5: x
		"101,B,3,20,20,C\n" + // line 6: another level
		",B,4,20,20,A\n" // line 7: section
	_, err := FromCSV(strings.NewReader(src), "Teatro", "Recife")
	var ce *CSVError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidLayout) {
		t.Fatalf("got %v", err)
	}
	want := []LineError{{3, "seat", ""}, {4, "seat", "already on line 2"}, {5, "x", ""}, {6, "price_level", "on line 2"}, {7, "section", ""}}
	if len(ce.Lines) != len(want) {
		t.Fatalf("got %+v", ce.Lines)
	}
	for i, w := range want {
		g := ce.Lines[i]
		if g.Line != w.Line || g.Field != w.Field || !strings.Contains(g.Detail, w.Detail) {
			t.Errorf("error %d: got %+v, want %+v", i, g, w)
		}
	}
	if !strings.HasPrefix(ce.Detail(), "Line 3: seat must be a whole number") || !strings.HasSuffix(err.Error(), ce.Detail()) {
		t.Errorf("message %q", err)
	}
}

func TestFromCSVWithoutSeatsOrNames(t *testing.T) {
	for _, c := range []struct{ src, name, want string }{
		{"section,row,seat,x,y,price_level\n", "T", "no seats"},
		{"1,A,1,1,1,A\n", "", "name and city"},
		{"section,row,seat,x\n", "T", "no y column"},
		{"1,A,\"1,1,1,A\n", "T", "not valid CSV"},
	} {
		_, err := FromCSV(strings.NewReader(c.src), c.name, "Recife")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
