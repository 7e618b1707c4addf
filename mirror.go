package leaderboard

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// errMirror is a top mirror's text that mirror.lua did not write: a key
// of that name written by something else.
var errMirror = errors.New("leaderboard: top mirror: not a mirror")

// parseMirror decodes a top mirror's text (mirror.lua): for each entry, in
// board order, the member's length, ':', the member, its stored value and
// ','. Scores are the stored values; members share text's memory. An
// empty period's mirror is "", its entries none (not nil: Top's answer).
func parseMirror(text string) ([]Entry, error) {
	es := []Entry{}
	if text != "" {
		es = make([]Entry, 0, 16)
	}
	for rest := text; rest != ""; {
		e, next, err := mirrorEntry(rest)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", errMirror, len(es)+1, err)
		}
		es, rest = append(es, e), next
	}
	return es, nil
}

// mirrorEntry decodes the first entry of a mirror's text, and returns
// the text after it.
func mirrorEntry(text string) (Entry, string, error) {
	colon := strings.IndexByte(text, ':')
	if colon < 1 {
		return Entry{}, "", errors.New("no member length")
	}
	n, err := strconv.Atoi(text[:colon])
	if err != nil || n < 1 || n > len(text)-colon-1 {
		return Entry{}, "", fmt.Errorf("member length %q", text[:colon])
	}
	member, rest := text[colon+1:colon+1+n], text[colon+1+n:]
	comma := strings.IndexByte(rest, ',')
	if comma < 1 {
		return Entry{}, "", errors.New("no stored value")
	}
	v, err := strconv.ParseFloat(rest[:comma], 64)
	if err != nil || math.IsNaN(v) {
		return Entry{}, "", fmt.Errorf("stored value %q", rest[:comma])
	}
	return Entry{Member: member, Score: v}, rest[comma+1:], nil
}
