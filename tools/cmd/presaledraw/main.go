// Command presaledraw recomputes a verified-fan presale's winners from
// what catraca publishes: the revealed seed, its commitment and the list
// of registration ids (docs/fairness.md, "Check a draw yourself").
//
//	go run ./tools/cmd/presaledraw -event https://catraca.example/api/events/42
//	go run ./tools/cmd/presaledraw -seed <hex> -commitment <hex> -codes 500 -ids ids.txt
//
// It prints the winning registration ids, one a line, in draw order. It
// is written from the algorithm as the docs state it and uses only the
// standard library, so an auditor can read it whole or copy it out of
// the repository; TestCommandAgreesWithTheServer holds it to the
// server's draw.
package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "presaledraw:", err)
		os.Exit(1)
	}
}

// draw is what the check needs.
type draw struct {
	seed       []byte
	commitment string
	codes      int
	ids        []string
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("presaledraw", flag.ContinueOnError)
	event := fs.String("event", "", "the event's API URL (…/api/events/<id>): reads the seed, commitment, codes and ids from it")
	seedHex := fs.String("seed", "", "the revealed seed, hex")
	commitment := fs.String("commitment", "", "the published seed_sha256, hex (checked against the seed)")
	codes := fs.Int("codes", 0, "the number of presale codes")
	idsFile := fs.String("ids", "", "file of registration ids, one a line (- for stdin)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var d draw
	var err error
	if *event != "" {
		d, err = fetch(strings.TrimSuffix(*event, "/"))
	} else {
		d, err = fromFlags(*seedHex, *commitment, *codes, *idsFile)
	}
	if err != nil {
		return err
	}
	if d.commitment != "" {
		sum := sha256.Sum256(d.seed)
		if hex.EncodeToString(sum[:]) != strings.ToLower(d.commitment) {
			return errors.New("the seed does not match the published commitment: SHA-256(seed) = " + hex.EncodeToString(sum[:]))
		}
	}
	w := bufio.NewWriter(out)
	for _, id := range winners(d.seed, d.ids, d.codes) {
		fmt.Fprintln(w, id)
	}
	return w.Flush()
}

func fromFlags(seedHex, commitment string, codes int, idsFile string) (draw, error) {
	seed, err := hex.DecodeString(seedHex)
	if err != nil || len(seed) == 0 {
		return draw{}, errors.New("-seed must be the revealed seed in hex")
	}
	if codes < 0 {
		return draw{}, errors.New("-codes must not be negative")
	}
	var raw []byte
	switch idsFile {
	case "":
		return draw{}, errors.New("-ids names the file of registration ids (- for stdin)")
	case "-":
		raw, err = io.ReadAll(os.Stdin)
	default:
		raw, err = os.ReadFile(idsFile)
	}
	if err != nil {
		return draw{}, err
	}
	return draw{seed: seed, commitment: commitment, codes: codes, ids: lines(raw)}, nil
}

// fetch reads a drawn presale from the event's API URL.
func fetch(event string) (draw, error) {
	raw, err := get(event + "/presale")
	if err != nil {
		return draw{}, err
	}
	var p struct {
		Phase      string `json:"phase"`
		Seed       string `json:"seed"`
		Commitment string `json:"seed_sha256"`
		Codes      int    `json:"codes"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return draw{}, fmt.Errorf("read %s/presale: %w", event, err)
	}
	if p.Phase != "drawn" {
		return draw{}, errors.New("the presale is not drawn yet (phase " + p.Phase + "): the seed is revealed by the draw")
	}
	ids, err := get(event + "/presale/registrations")
	if err != nil {
		return draw{}, err
	}
	seed, err := hex.DecodeString(p.Seed)
	if err != nil || len(seed) == 0 {
		return draw{}, errors.New("the presale's seed is not hex: " + p.Seed)
	}
	d := draw{seed: seed, commitment: p.Commitment, codes: p.Codes}
	d.ids = lines(ids)
	return d, nil
}

func get(url string) ([]byte, error) {
	res, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", url, res.Status, bytes.TrimSpace(raw))
	}
	return raw, err
}

func lines(raw []byte) []string {
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// winners is the draw as docs/fairness.md states it: ids sorted bytewise
// without duplicates, ordered by HMAC-SHA256(seed, id) ascending (ties by
// id), the first codes of them win.
func winners(seed []byte, ids []string, codes int) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	score := make(map[string][]byte, len(ids))
	for _, id := range ids {
		m := hmac.New(sha256.New, seed)
		m.Write([]byte(id))
		score[id] = m.Sum(nil)
	}
	slices.SortStableFunc(ids, func(a, b string) int { return bytes.Compare(score[a], score[b]) })
	return ids[:min(codes, len(ids))]
}
