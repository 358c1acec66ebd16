package searchindex

import "strings"

// TSQuery renders how the index reads typed text, in the text form of
// the catalog's search_query with no weight, cast to text (empty when
// nothing can match).
func (x *Index) TSQuery(text string) string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	terms, ok := x.st.parse(text)
	if !ok {
		return ""
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + strings.ReplaceAll(t.word, "'", "''") + "'"
		if t.prefix {
			parts[i] += ":*"
		}
	}
	return strings.Join(parts, " & ")
}

// Lexemes is lexemes, for the test that compares it with PostgreSQL.
var Lexemes = lexemes

// Fold folds s as the loaded index folds what people type.
func (x *Index) Fold(s string) string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.st.fold.fold(s)
}
