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

// parseMirror decodes a top mirror's text (mirror.lua): its head, the k
// of the board that wrote it (mirrorHead), then its entries
// (mirrorEntries).
func parseMirror(text string) (int, []Entry, error) {
	k, body, err := mirrorHead(text)
	if err != nil {
		return 0, nil, err
	}
	es, err := mirrorEntries(body, k)
	return k, es, err
}

// mirrorHead reads the k a mirror's text opens with, and ';', and returns
// it and the entries' text after it.
func mirrorHead(text string) (int, string, error) {
	semi := strings.IndexByte(text, ';')
	k, err := strconv.Atoi(text[:max(semi, 0)])
	if semi < 1 || err != nil || k < 1 || k > MaxN {
		return 0, "", fmt.Errorf("%w: no k", errMirror)
	}
	return k, text[semi+1:], nil
}

// mirrorEntries decodes the entries of a mirror of k: for each, in board
// order, the member's length, ':', the member, its stored value and ','.
// Scores are the stored values; members share rest's memory. An empty
// period's mirror holds no entries (not nil: Top's answer).
func mirrorEntries(rest string, k int) ([]Entry, error) {
	// One ',' ends each entry (members may hold more): at most k of them.
	es := make([]Entry, 0, min(k, strings.Count(rest, ",")))
	for rest != "" {
		if len(es) == k {
			return nil, fmt.Errorf("%w: more than its k of %d entries", errMirror, k)
		}
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
