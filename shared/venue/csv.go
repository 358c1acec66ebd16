package venue

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/catraca/catraca/shared/config"
)

// CSVColumns are the columns of a seat list, one seat a line, as venues
// hand their maps over. A first line naming them may give another order.
var CSVColumns = []string{"section", "row", "seat", "x", "y", "price_level"}

// LineError is one mistake of a CSV seat list, on the line a spreadsheet
// shows (1 is the first line; 0 concerns the whole list).
type LineError struct {
	Line   int    `json:"line"`
	Field  string `json:"field,omitempty"`
	Detail string `json:"detail"`
}

// CSVError lists every mistake found in a seat list (up to maxLineErrors),
// so a venue fixes them all at once. It wraps ErrInvalidLayout.
type CSVError struct{ Lines []LineError }

func (e *CSVError) Error() string { return ErrInvalidLayout.Error() + ": " + e.Detail() }

// Detail is the refusal as the client reads it: the first mistake, and
// where to find the others.
func (e *CSVError) Detail() string {
	first := e.Lines[0]
	more := ""
	if n := len(e.Lines) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	where := "This seat list cannot be imported"
	if first.Line > 0 {
		where = fmt.Sprintf("Line %d", first.Line)
	}
	return fmt.Sprintf("%s: %s%s. Every line with a mistake is listed in errors; fix them and send the whole list again.", where, first.Detail, more)
}

func (e *CSVError) Unwrap() error { return ErrInvalidLayout }

const (
	maxLineErrors = 100
	maxCoordinate = 99_990 // the map, with its margin, stays within Validate's 100000
	seatMargin    = 4      // around a section's seats (seat pitch is about 5)
)

// FromCSV builds a seated layout named name in city from a seat list. Rows
// and sections keep the order they first appear in (the first is nearest
// the stage and best); each section's outline is the box around its seats.
// Standing areas are imported as JSON. A list over a layout cap
// (config.LayoutMax*) is refused on the first line past it.
func FromCSV(r io.Reader, name, city string) (Layout, error) {
	return fromCSV(r, name, city, layoutCaps)
}

// caps bounds what a layout holds (see config.LayoutMaxSeats).
type caps struct{ seats, sections, rows, rowSeats int }

var layoutCaps = caps{config.LayoutMaxSeats, config.LayoutMaxSections, config.LayoutMaxSectionRows, config.LayoutMaxRowSeats}

func fromCSV(r io.Reader, name, city string, limit caps) (Layout, error) {
	p := csvParser{limit: limit, cols: map[string]int{}, seen: map[string]int{}, levels: map[string]levelAt{},
		sections: map[string]int{}, rows: map[string]int{}}
	l := Layout{Name: strings.TrimSpace(name), City: strings.TrimSpace(city)}
	if l.Name == "" || l.City == "" {
		p.fail(0, "", "name and city are required (query parameters ?name=…&city=…)")
	}
	// Spreadsheets' "CSV UTF-8" starts with a byte-order mark.
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	for i, c := range CSVColumns {
		p.cols[c] = i
	}
	for first := true; len(p.errs) < maxLineErrors && !p.over; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			p.fail(perr.Line, "", "not valid CSV: "+perr.Err.Error())
			break
		}
		if err != nil {
			return Layout{}, err
		}
		line, _ := cr.FieldPos(0)
		if first {
			p.width = len(rec)
			if p.header(rec) {
				continue
			}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		if len(rec) != p.width {
			// A column too many would be dropped, one too few blamed on the last.
			p.fail(line, "", fmt.Sprintf("this line has %d columns and the first line %d: every line needs %s",
				len(rec), p.width, strings.Join(CSVColumns, ",")))
			continue
		}
		p.seat(&l, line, rec)
	}
	if len(p.errs) == 0 && l.SeatCount() == 0 {
		p.fail(0, "", "the list has no seats: one line per seat, columns "+strings.Join(CSVColumns, ","))
	}
	if len(p.errs) > 0 {
		return Layout{}, &CSVError{Lines: p.errs}
	}
	frame(&l, p.boxes)
	return l, nil
}

type levelAt struct {
	level string
	line  int
}

type csvParser struct {
	limit    caps
	over     bool // a cap is passed: the rest of the list is not read
	seats    int
	width    int // columns of the first line
	cols     map[string]int
	seen     map[string]int     // section/row/seat → line
	levels   map[string]levelAt // section → its price level, first given on line
	sections map[string]int     // section → index in the layout
	rows     map[string]int     // section/row → index in its section
	boxes    []box
	errs     []LineError
}

type box struct{ minX, minY, maxX, maxY float64 }

func (p *csvParser) fail(line int, field, detail string) {
	p.errs = append(p.errs, LineError{Line: line, Field: field, Detail: detail})
}

// header reads a first line of column names, if it is one.
func (p *csvParser) header(rec []string) bool {
	names := map[string]int{}
	for i, f := range rec {
		names[strings.ReplaceAll(strings.ToLower(strings.TrimSpace(f)), " ", "_")] = i
	}
	if _, ok := names["section"]; !ok {
		return false
	}
	for _, c := range CSVColumns {
		i, ok := names[c]
		if !ok {
			p.fail(1, c, "the header has no "+c+" column (columns: "+strings.Join(CSVColumns, ",")+")")
		}
		p.cols[c] = i
	}
	return true
}

// seat adds one line's seat to l, or records what is wrong with it.
func (p *csvParser) seat(l *Layout, line int, rec []string) {
	get := func(c string) string {
		if i := p.cols[c]; i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	before := len(p.errs)
	text := func(c string) string {
		v := get(c)
		if v == "" || utf8.RuneCountInString(v) > 20 { // characters, as the message says
			p.fail(line, c, c+" must be 1 to 20 characters")
		}
		return v
	}
	section, row, level := text("section"), text("row"), text("price_level")
	number, err := strconv.Atoi(get("seat"))
	if err != nil || !fits(number) {
		p.fail(line, "seat", fmt.Sprintf("seat must be a whole number from 0 to %d, not %q", maxInt4, get("seat")))
	}
	coord := func(c string) float64 {
		v, err := strconv.ParseFloat(get(c), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > maxCoordinate {
			p.fail(line, c, fmt.Sprintf("%s must be a number from 0 to %d, not %q", c, maxCoordinate, get(c)))
		}
		return v
	}
	x, y := coord("x"), coord("y")
	if len(p.errs) > before {
		return
	}
	key := section + "\x00" + row + "\x00" + strconv.Itoa(number)
	if at, ok := p.seen[key]; ok {
		p.fail(line, "seat", fmt.Sprintf("section %s row %s seat %d is already on line %d", section, row, number, at))
		return
	}
	p.seen[key] = line
	if first, ok := p.levels[section]; ok && first.level != level {
		p.fail(line, "price_level", fmt.Sprintf("section %s has price level %s on line %d: one level per section", section, first.level, first.line))
		return
	} else if !ok {
		if p.capped(len(l.Sections) == p.limit.sections, line, "section", "a layout holds at most %d sections", p.limit.sections) {
			return
		}
		p.levels[section] = levelAt{level, line}
		p.sections[section] = len(l.Sections)
		l.Sections = append(l.Sections, Section{Code: section, Name: section, Kind: "seated", Rank: len(l.Sections) + 1, PriceLevel: level})
		p.boxes = append(p.boxes, box{x, y, x, y})
	}
	i := p.sections[section]
	sec := &l.Sections[i]
	rowKey := section + "\x00" + row
	r, ok := p.rows[rowKey]
	if !ok {
		if p.capped(len(sec.Rows) == p.limit.rows, line, "row", "section %s already has %d rows, the most a section holds: split it into sections", section, p.limit.rows) {
			return
		}
		r = len(sec.Rows)
		p.rows[rowKey] = r
		sec.Rows = append(sec.Rows, Row{Label: row, Rank: r + 1})
	}
	if p.capped(len(sec.Rows[r].Seats) == p.limit.rowSeats, line, "seat", "section %s row %s already has %d seats, the most a row holds", section, row, p.limit.rowSeats) ||
		p.capped(p.seats == p.limit.seats, line, "seat", "a layout holds at most %d seats", p.limit.seats) {
		return
	}
	p.seats++
	b := &p.boxes[i]
	b.minX, b.minY, b.maxX, b.maxY = math.Min(b.minX, x), math.Min(b.minY, y), math.Max(b.maxX, x), math.Max(b.maxY, y)
	sec.Rows[r].Seats = append(sec.Rows[r].Seats, Seat{Number: number, X: float32(x), Y: float32(y)})
}

// capped records, when full, that line passes a layout cap and stops the
// parse there: the lines after it would only add to what is refused.
func (p *csvParser) capped(full bool, line int, field, format string, a ...any) bool {
	if full {
		p.fail(line, field, fmt.Sprintf(format, a...))
		p.over = true
	}
	return full
}

// frame outlines each section and sizes the map around every seat.
func frame(l *Layout, boxes []box) {
	for i, b := range boxes {
		x0, y0 := int(math.Max(0, math.Floor(b.minX-seatMargin))), int(math.Max(0, math.Floor(b.minY-seatMargin)))
		x1, y1 := int(math.Ceil(b.maxX+seatMargin)), int(math.Ceil(b.maxY+seatMargin))
		l.Sections[i].Shape = [][2]int{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
		l.Width, l.Height = max(l.Width, x1+seatMargin), max(l.Height, y1+seatMargin)
	}
}
