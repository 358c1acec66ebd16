package venue

import (
	"fmt"
	"math"
)

// Stadium generates a stadium-like layout: a stage at the top, a standing
// floor in front of it and two rings of numbered seated sections around the
// floor, open towards the stage. rowsPerSection × seats per row grows with the ring radius; the
// result has at least minSeats reserved seats.
func Stadium(name, city string, minSeats, floorCapacity int) Layout {
	const cx, cy = 500.0, 540.0
	l := Layout{Name: name, City: city, Width: 1000, Height: 1000,
		Stage: [][2]int{{400, 40}, {600, 40}, {600, 110}, {400, 110}}}
	l.Sections = append(l.Sections, Section{
		Code: "FLOOR", Name: "Floor (standing)", Kind: "standing", Rank: 0, PriceLevel: "GA",
		Capacity: floorCapacity, Shape: [][2]int{{390, 150}, {610, 150}, {610, 620}, {390, 620}},
	})
	// Each ring: sections spread over 300° leaving the stage side (90°, the
	// top) open, so neither the floor nor the stage lies under a section.
	type ring struct {
		prefix, level   string
		inner, rowDepth float64
		rows, sections  int
		seatSpacing     float64
		rankBase        int
	}
	rings := []ring{
		{prefix: "1", level: "A", inner: 250, rowDepth: 5, rows: 20, sections: 20, seatSpacing: 5.0, rankBase: 100},
		{prefix: "2", level: "C", rowDepth: 5, rows: 22, sections: 24, seatSpacing: 5.0, rankBase: 200},
	}
	total := 0
	for scale := 0.1; ; scale += 0.05 {
		l.Sections = l.Sections[:1]
		total = 0
		inner := rings[0].inner
		for _, rg := range rings {
			rg.inner = inner
			start, span := math.Pi*(90+30)/180, math.Pi*300/180 // from 30° left of the stage, round the far end
			per := span / float64(rg.sections)
			for s := 0; s < rg.sections; s++ {
				a0 := start + per*float64(s) + per*0.04
				a1 := start + per*float64(s+1) - per*0.04
				// distance from the stage axis decides rank and price
				mid := (a0 + a1) / 2
				off := math.Abs(math.Remainder(mid-math.Pi/2, 2*math.Pi)) // 0 facing the stage
				level := rg.level
				if rg.prefix == "1" && off > math.Pi*0.55 {
					level = "B"
				}
				sec := Section{Code: fmt.Sprintf("%s%02d", rg.prefix, s+1), Kind: "seated",
					Rank: rg.rankBase + int(off*10), PriceLevel: level}
				sec.Name = "Section " + sec.Code
				rows := int(float64(rg.rows) * scale)
				for r := 0; r < rows; r++ {
					rad := rg.inner + float64(r)*rg.rowDepth
					n := int((a1 - a0) * rad / rg.seatSpacing)
					row := Row{Label: rowLabel(r), Rank: r + 1}
					for k := 0; k < n; k++ {
						a := a0 + (a1-a0)*(float64(k)+0.5)/float64(n)
						row.Seats = append(row.Seats, Seat{Number: k + 1,
							X: float32(math.Round((cx+rad*math.Cos(a))*10) / 10),
							Y: float32(math.Round((cy-rad*math.Sin(a))*10) / 10)})
					}
					total += n
					sec.Rows = append(sec.Rows, row)
				}
				outer := rg.inner + float64(rows)*rg.rowDepth
				for _, p := range [][2]float64{{rg.inner - 3, a0}, {rg.inner - 3, a1}, {outer, a1}, {outer, a0}} {
					sec.Shape = append(sec.Shape, [2]int{int(cx + p[0]*math.Cos(p[1])), int(cy - p[0]*math.Sin(p[1]))})
				}
				l.Sections = append(l.Sections, sec)
			}
			inner = rg.inner + float64(int(float64(rg.rows)*scale))*rg.rowDepth + 15
		}
		if total >= minSeats {
			fit(&l, 20)
			return l
		}
	}
}

// fit moves everything drawn so it starts margin units from the top left
// corner and sizes the layout to hold it: big rings reach past 1000×1000.
func fit(l *Layout, margin int) {
	minX, minY, maxX, maxY := math.MaxInt, math.MaxInt, math.MinInt, math.MinInt
	for _, p := range l.Stage {
		minX, minY, maxX, maxY = min(minX, p[0]), min(minY, p[1]), max(maxX, p[0]), max(maxY, p[1])
	}
	for _, s := range l.Sections {
		for _, p := range s.Shape {
			minX, minY, maxX, maxY = min(minX, p[0]), min(minY, p[1]), max(maxX, p[0]), max(maxY, p[1])
		}
	}
	dx, dy := margin-minX, margin-minY
	move := func(shape [][2]int) {
		for i := range shape {
			shape[i][0] += dx
			shape[i][1] += dy
		}
	}
	move(l.Stage)
	for i := range l.Sections {
		s := &l.Sections[i]
		move(s.Shape)
		for _, r := range s.Rows {
			for k := range r.Seats {
				r.Seats[k].X += float32(dx)
				r.Seats[k].Y += float32(dy)
			}
		}
	}
	l.Width, l.Height = maxX-minX+2*margin, maxY-minY+2*margin
}

// rowLabel names rows A..Z, AA..AZ, …
func rowLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return rowLabel(i/26-1) + string(rune('A'+i%26))
}
