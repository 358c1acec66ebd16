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
