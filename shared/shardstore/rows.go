package shardstore

// Rows converts the store's rows one by one into a domain package's own
// type, keeping a nil list nil (it answers null, an empty one []). The
// rows carry no JSON names: the domain's types do, so a renamed column
// cannot rename an API field.
func Rows[Row, T any](rows []Row, conv func(Row) T) []T {
	if rows == nil {
		return nil
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = conv(r)
	}
	return out
}
