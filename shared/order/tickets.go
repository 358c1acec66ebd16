package order

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strconv"
	"strings"
)

// Signer makes and checks ticket codes: "<order>-<item>-<n>-<mac>". The MAC
// makes codes unguessable; the order id in front routes to its shard.
type Signer struct{ key []byte }

// NewSigner returns a ticket signer.
func NewSigner(key []byte) *Signer { return &Signer{key: key} }

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

func (s *Signer) mac(order, item int64, n int) string {
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "%d/%d/%d", order, item, n)
	return b32.EncodeToString(m.Sum(nil)[:10])
}

// Code returns the ticket code of the n-th admission of an order item.
func (s *Signer) Code(order, item int64, n int) string {
	return fmt.Sprintf("%d-%d-%d-%s", order, item, n, s.mac(order, item, n))
}

// Valid tells whether code was made by this signer.
func (s *Signer) Valid(code string) bool {
	parts := strings.Split(code, "-")
	if len(parts) != 4 {
		return false
	}
	order, err1 := strconv.ParseInt(parts[0], 10, 64)
	item, err2 := strconv.ParseInt(parts[1], 10, 64)
	n, err3 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return false
	}
	return hmac.Equal([]byte(parts[3]), []byte(s.mac(order, item, n)))
}
