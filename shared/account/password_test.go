package account

import (
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestPasswordsMatchAcrossUnicodeForms(t *testing.T) {
	cost := Argon2{MemoryKiB: 64, Time: 1, Threads: 1}
	nfc, nfd := norm.NFC.String("São Paulo 2026"), norm.NFD.String("São Paulo 2026")
	if nfc == nfd {
		t.Fatal("the two forms should differ")
	}
	hash, err := cost.hashPassword(nfc)
	if err != nil {
		t.Fatal(err)
	}
	// A hash made before passwords were normalized: the bytes as typed.
	legacy, err := cost.hash([]byte(nfd))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, password, hash string
		want                 bool
	}{
		{"composed against composed", nfc, hash, true},
		{"decomposed against composed", nfd, hash, true},
		{"legacy hash, typed as then", nfd, legacy, true},
		{"wrong password", "Sao Paulo 2026", hash, false},
		{"wrong password, legacy hash", "Sao Paulo 2026", legacy, false},
	} {
		ok, err := verifyPassword(c.password, c.hash)
		if err != nil || ok != c.want {
			t.Errorf("%s: verify = %v, %v; want %v", c.name, ok, err, c.want)
		}
	}
}

func TestCommonPasswordsAreJudgedAsHashed(t *testing.T) {
	for _, p := range []string{"password123", "ＰＡＳＳＷＯＲＤ１２３", "ｐａｓｓｗｏｒｄ１２３"} {
		if err := checkPassword(p, "fan@example.com"); err == nil {
			t.Errorf("%q was accepted: it is hashed as a common password", p)
		}
	}
	if err := checkPassword("correct horse battery", "fan@example.com"); err != nil {
		t.Errorf("a long passphrase was refused: %v", err)
	}
}
