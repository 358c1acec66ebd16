package venue

import "testing"

// The standing floor must not be drawn over seated sections: every seat
// and every corner of a seated section lies outside the floor.
func TestStadiumFloorClearOfSections(t *testing.T) {
	for _, seats := range []int{400, 3000, 20000} {
		l := Stadium("Arena", "Rio de Janeiro", seats, 100)
		if err := l.Validate(); err != nil {
			t.Fatal(err)
		}
		floor := l.Sections[0].Shape
		inside := func(x, y float64) bool {
			return x > float64(floor[0][0]) && x < float64(floor[1][0]) && y > float64(floor[0][1]) && y < float64(floor[2][1])
		}
		for _, sec := range l.Sections[1:] {
			for _, p := range sec.Shape {
				if inside(float64(p[0]), float64(p[1])) {
					t.Fatalf("%d seats: section %s corner %v is on the floor %v", seats, sec.Code, p, floor)
				}
			}
			for _, r := range sec.Rows {
				for _, st := range r.Seats {
					if inside(float64(st.X), float64(st.Y)) {
						t.Fatalf("%d seats: section %s row %s seat %d is on the floor", seats, sec.Code, r.Label, st.Number)
					}
				}
			}
		}
	}
}

// Every seat and section of the generated stadium lies inside its width
// and height (the demo's 20,000 seats reach past 1000×1000).
func TestStadiumFitsItsBox(t *testing.T) {
	l := Stadium("Arena", "Rio de Janeiro", 20000, 100)
	for _, sec := range l.Sections {
		for _, p := range sec.Shape {
			if p[0] < 0 || p[1] < 0 || p[0] > l.Width || p[1] > l.Height {
				t.Fatalf("section %s corner %v is outside %d×%d", sec.Code, p, l.Width, l.Height)
			}
		}
	}
}
