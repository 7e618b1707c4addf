package keys

import (
	"strings"
	"testing"
)

// FuzzBoardKeys holds the key builder to what the package promises of any
// names ValidName and ValidSegment let through: every key of a board is in
// its tag's slot, two periods never share a key, and no key the board keeps
// beside its periods (ids, data, marker, a mirror, a turn) is a period's.
func FuzzBoardKeys(f *testing.F) {
	f.Add("lb", "race", "daily", "2026-12-05", "weekly", "2026-W49")
	f.Add("a:b", "x:y", "alltime", "alltime", "alltime", "x")
	f.Add("lb", "üben", "ids", "x", "w", "w")
	f.Add("p", "n", "topk", "turn", "", "")
	f.Fuzz(func(t *testing.T, prefix, name, w1, p1, w2, p2 string) {
		if !ValidName(prefix) || !ValidName(name) || strings.Contains(name, "#") {
			return
		}
		b := NewBoard(prefix, name)
		slot := Slot(b.Tag())
		own := []string{b.IDs(), b.Data(), b.Marker()}
		var periods []string
		for _, wp := range [][2]string{{w1, p1}, {w2, p2}} {
			w, p := wp[0], wp[1]
			if !ValidSegment(w) || Reserved(w) || !ValidSegment(p) {
				continue
			}
			periods = append(periods, b.Period(w, p))
			own = append(own, b.Hot(w, p), b.HotTurn(w, p))
		}
		for _, k := range append(periods, own...) {
			if Slot(k) != slot {
				t.Fatalf("%q: slot %d, the board's tag %q is in %d", k, Slot(k), b.Tag(), slot)
			}
			if !strings.HasPrefix(k, b.base+":") {
				t.Fatalf("%q: not under %q", k, b.base)
			}
		}
		if len(periods) == 2 && (w1 != w2 || p1 != p2) && periods[0] == periods[1] {
			t.Fatalf("periods (%q, %q) and (%q, %q) share key %q", w1, p1, w2, p2, periods[0])
		}
		for _, p := range periods {
			for _, k := range own {
				if p == k {
					t.Fatalf("period key %q is also a key the board keeps beside its periods", p)
				}
			}
		}
	})
}
