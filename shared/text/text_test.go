package text

import "testing"

func TestOneLine(t *testing.T) {
	for s, want := range map[string]bool{
		"Estádio do Maracanã": true,
		"Setor 12 · Fila B":   true,
		"":                    true,
		"North\r\nX":          false,
		"tab\there":           false,
		"nul\x00":             false,
		"\u202Eevil":          false, // right-to-left override
		"\u2067isolate":       false, // right-to-left isolate
		"bad \xff byte":       false,
		"line\u2028separator": false,
		"para\u2029graph":     false,
	} {
		if got := OneLine(s); got != want {
			t.Errorf("OneLine(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestBlankAndLength(t *testing.T) {
	for s, want := range map[string]bool{
		"":                   true,
		" ":                  true,
		"\u200b":             true, // zero-width space
		"\u00a0\ufeff\u200d": true,
		"\u3164":             true, // Hangul filler
		"North":              false,
		" ã ":                false,
	} {
		if got := Blank(s); got != want {
			t.Errorf("Blank(%q) = %v, want %v", s, got, want)
		}
	}
	if n := Length("Portão Norte"); n != 12 {
		t.Errorf("Length counts characters, got %d", n)
	}
}
