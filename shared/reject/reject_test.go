package reject

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorMatchesItsKindAndKeepsTheDetail(t *testing.T) {
	kind := errors.New("invalid layout")
	err := fmt.Errorf("import: %w", New(kind, "/sections/0", "Section A row 3: seat 7 appears twice."))
	if !errors.Is(err, kind) {
		t.Fatalf("errors.Is(%v, kind) = false", err)
	}
	var r *Error
	if !errors.As(err, &r) || r.Detail() != "Section A row 3: seat 7 appears twice." {
		t.Fatalf("detail = %q", r.Detail())
	}
	if got, want := err.Error(), "import: invalid layout: Section A row 3: seat 7 appears twice."; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestPointerEscapesKeys(t *testing.T) {
	if got, want := Pointer("sections", 2, "rows", 0, "a/b~c"), "/sections/2/rows/0/a~1b~0c"; got != want {
		t.Fatalf("Pointer = %q, want %q", got, want)
	}
	if got := Pointer(); got != "" {
		t.Fatalf("Pointer() = %q, want the whole document", got)
	}
}
