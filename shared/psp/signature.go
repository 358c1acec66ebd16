package psp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Tolerance is how old a signed delivery may be (replay protection).
const Tolerance = 300 * time.Second

// ErrBadSignature means a webhook must not be trusted.
var ErrBadSignature = errors.New("bad webhook signature")

// Sign returns the PSP-Signature header for body at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks header against body with any of secrets (several during a
// rotation) and the timestamp tolerance.
func Verify(secrets [][]byte, header string, body []byte, now time.Time) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(unix, 0)); d > Tolerance || d < -Tolerance {
		return ErrBadSignature
	}
	for _, secret := range secrets {
		want := mac(secret, ts, body)
		for _, s := range sigs {
			if hmac.Equal([]byte(s), []byte(want)) {
				return nil
			}
		}
	}
	return ErrBadSignature
}
