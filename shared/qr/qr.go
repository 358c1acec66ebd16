// Package qr draws a ticket code as a QR module matrix: a few hundred
// bytes a page paints as SVG, instead of a PNG the server compresses.
package qr

import (
	"fmt"

	goqr "github.com/piglig/go-qr"
)

// Quiet is the light border, in modules, a scanner needs around a code
// (ISO/IEC 18004); pages draw it, the matrix does not hold it.
const Quiet = 4

// Matrix is a QR code's modules, row by row, one bit each (1 is dark),
// first module in the high bit; the last byte is padded with zeros.
type Matrix struct {
	Size    int    `json:"size"`
	Modules []byte `json:"modules"` // base64 in JSON
}

// Encode makes the code of text at medium error correction (raised when
// it fits the same version), with the mask of least penalty: what the
// standard asks of an encoder, so cameras lock on at a glance.
func Encode(text string) (Matrix, error) {
	c, err := goqr.EncodeText(text, goqr.Medium)
	if err != nil {
		return Matrix{}, fmt.Errorf("qr code of %d characters: %w", len(text), err)
	}
	n := c.Size()
	m := Matrix{Size: n, Modules: make([]byte, (n*n+7)/8)}
	for y := range n {
		for x := range n {
			if c.Module(x, y) {
				i := y*n + x
				m.Modules[i/8] |= 0x80 >> (i % 8)
			}
		}
	}
	return m, nil
}

// Dark tells whether the module at column x, row y is dark.
func (m Matrix) Dark(x, y int) bool {
	i := y*m.Size + x
	return m.Modules[i/8]&(0x80>>(i%8)) != 0
}
