package scripts

import (
	"strconv"
	"strings"
	"testing"

	"github.com/skiprank/leaderboard/internal/keys"
)

// TestRecentParts checks that versions.lua cuts a shard's recent versions
// into as many pieces as keys.Recent names.
func TestRecentParts(t *testing.T) {
	want := "local RECENT_PARTS = " + strconv.Itoa(keys.RecentParts) + "\n"
	if !strings.Contains(versions, want) {
		t.Fatalf("versions.lua does not say %q", want)
	}
}
