package venue

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/catraca/catraca/shared/reject"
)

// A JSON layout with many mistakes is refused with every one of them (up
// to maxMistakes), each pointing at its value, not only the first.
func TestValidateReportsEveryMistake(t *testing.T) {
	l := Stadium("Many Mistakes Arena", "Recife", 20, 5)
	l.Width = 0
	l.Sections[1].Kind = "lying"
	l.Sections[2].Rows[1].Seats[3].Number = l.Sections[2].Rows[1].Seats[2].Number
	var r *reject.Error
	if err := l.Validate(); !errors.As(err, &r) || !errors.Is(err, ErrInvalidLayout) {
		t.Fatalf("want a layout refusal, got %v", err)
	}
	want := []reject.Reason{
		{Pointer: "/width", Detail: "Width and height must be between 1 and 100000."},
		{Pointer: "/sections/1/kind", Detail: fmt.Sprintf("Section %s: kind must be seated or standing.", l.Sections[1].Code)},
		{Pointer: "/sections/2/rows/1/seats/3/n", Detail: fmt.Sprintf("Section %s row %s: seat %d appears twice.",
			l.Sections[2].Code, l.Sections[2].Rows[1].Label, l.Sections[2].Rows[1].Seats[3].Number)},
	}
	if fmt.Sprint(r.Reasons) != fmt.Sprint(want) {
		t.Fatalf("reasons:\n got %v\nwant %v", r.Reasons, want)
	}
	if d := r.Detail(); !strings.HasPrefix(d, "Width and height must be between 1 and 100000 (and 2 more mistakes: each is listed in errors") {
		t.Fatalf("detail: %s", d)
	}

	// A row of 150 seats all numbered 1: 149 mistakes, the first 100 listed.
	row := &l.Sections[2].Rows[0]
	row.Seats = make([]Seat, 150)
	for i := range row.Seats {
		row.Seats[i].Number = 1
	}
	l.Width, l.Sections[1].Kind = 100, "seated"
	l.Sections[2].Rows[1].Seats[3].Number = 1000
	if err := l.Validate(); !errors.As(err, &r) || len(r.Reasons) != maxMistakes {
		t.Fatalf("want %d reasons, got %v", maxMistakes, err)
	}
	if r.Reasons[0].Pointer != "/sections/2/rows/0/seats/1/n" || !strings.Contains(r.Detail(), "(and 148 more mistakes: the first 100 are listed") {
		t.Fatalf("first %v, detail %s", r.Reasons[0], r.Detail())
	}
}

// Names, codes and labels are one line each: a line break or a direction
// override would break or reverse the map, tickets and exports around them.
func TestValidateRefusesControlCharacters(t *testing.T) {
	l := Stadium("Arena\r\nX-Injected: 1", "Recife", 20, 5)
	l.Sections[0].Name = "North \u202Ereversed"
	l.Sections[2].Rows[1].Label = "B\x00"
	var r *reject.Error
	if err := l.Validate(); !errors.As(err, &r) {
		t.Fatalf("want a layout refusal, got %v", err)
	}
	var got []string
	for _, reason := range r.Reasons {
		got = append(got, reason.Pointer)
	}
	want := []string{"/name", "/sections/0/name", "/sections/2/rows/1/label"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pointers %v, want %v (%v)", got, want, r.Reasons)
	}
	if !strings.Contains(r.Reasons[0].Detail, "line break or control character") {
		t.Fatalf("detail: %s", r.Reasons[0].Detail)
	}
}

// The country is an ISO 3166 code and the time zone an IANA name, as the
// API documents them; anything went before (a 20 kB country, a zone of
// "../../etc/passwd\n<script>"), stored with the venue.
func TestValidateRefusesCountriesAndZonesThatAreNot(t *testing.T) {
	for _, c := range []struct{ country, zone string }{{"", ""}, {"BR", "America/Sao_Paulo"}, {"AR", "America/Argentina/Buenos_Aires"},
		{"PT", "Etc/GMT+3"}, {"US", "EST5EDT"}, {"GB", "UTC"}} {
		l := Stadium("Zone Arena", "Recife", 20, 5)
		l.Country, l.Timezone = c.country, c.zone
		if err := l.Validate(); err != nil {
			t.Fatalf("%q %q: %v", c.country, c.zone, err)
		}
	}
	for _, c := range []struct{ country, zone, pointer string }{{"br", "", "/country"}, {"BRA", "", "/country"}, {strings.Repeat("X", 20000), "", "/country"},
		{"", "../../etc/passwd", "/timezone"}, {"", "America/Sao_Paulo\n", "/timezone"}, {"", "Europe/Lisbon ", "/timezone"},
		{"", strings.Repeat("A", 65), "/timezone"}} {
		l := Stadium("Zone Arena", "Recife", 20, 5)
		l.Country, l.Timezone = c.country, c.zone
		var r *reject.Error
		if err := l.Validate(); !errors.As(err, &r) || r.Reasons[0].Pointer != c.pointer {
			t.Fatalf("%q %q: want a refusal at %s, got %v", c.country, c.zone, c.pointer, err)
		}
	}
}
