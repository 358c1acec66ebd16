package qr_test

import (
	"encoding/json"
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	zxing "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/qr"
)

// picture paints m as a page does: scale pixels a module, the quiet zone
// around it.
func picture(m qr.Matrix, scale int) image.Image {
	side := (m.Size + 2*qr.Quiet) * scale
	img := image.NewGray(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			mx, my := x/scale-qr.Quiet, y/scale-qr.Quiet
			dark := mx >= 0 && my >= 0 && mx < m.Size && my < m.Size && m.Dark(mx, my)
			img.SetGray(x, y, color.Gray{Y: map[bool]uint8{true: 0, false: 255}[dark]})
		}
	}
	return img
}

// TestCodesScan: ZXing's reader (what many phone scanners run), with no
// hint that the picture is clean, reads back every code a ticket shows,
// at the size a phone paints it.
func TestCodesScan(t *testing.T) {
	t.Parallel()
	codes := []string{
		"R1.1025.1.118009442." + strings.Repeat("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 4)[:103],
		"R1.123456789013.7.118009443." + strings.Repeat("Q7ZZ2A", 18)[:103],
		"S1.1025.1." + strings.Repeat("MZXW6YTBOI", 11)[:103],
	}
	for _, code := range codes {
		m, err := qr.Encode(code)
		require.NoError(t, err)
		require.Equal(t, 0, (m.Size-17)%4, "a QR side is 17 + 4 × version")
		bmp, err := gozxing.NewBinaryBitmapFromImage(picture(m, 4))
		require.NoError(t, err)
		got, err := zxing.NewQRCodeReader().Decode(bmp, nil)
		require.NoError(t, err, code)
		require.Equal(t, code, got.GetText())
	}
}

func TestMatrixJSON(t *testing.T) {
	t.Parallel()
	m, err := qr.Encode("R1.1.1.1.AAAA")
	require.NoError(t, err)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var back qr.Matrix
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, m, back)
	require.Len(t, m.Modules, (m.Size*m.Size+7)/8, "one bit a module")
	require.True(t, m.Dark(0, 0) && m.Dark(6, 6) && !m.Dark(7, 7), "the top-left finder and its separator")
}
