package leaderboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
)

// TestNotRankedAtMaxmemory: over maxmemory, a read of a member that is not
// on the board answers ErrNotRanked, as it does under the limit. The read
// that Redis refused (a MULTI) is read again without one (oomReads), and
// that read's ErrNotRanked, an answer, not a failure, was dropped for the
// OOM error: a service answered 503 for an unknown player, and 200 for a
// known one.
func TestNotRankedAtMaxmemory(t *testing.T) {
	s := faultStartServer(t)
	c := s.client()
	ctx := context.Background()
	for kind, opts := range maxmemoryKinds(t) {
		board, err := lb.New(c, "mn-"+strings.ReplaceAll(kind, " ", "-"), opts...)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "m", 10)
		require.NoError(t, err)
	}
	overMaxmemory(t, s, c)
	for kind, opts := range maxmemoryKinds(t) {
		board, err := lb.New(c, "mn-"+strings.ReplaceAll(kind, " ", "-"), opts...)
		require.NoError(t, err)
		_, err = board.Rank(ctx, "nobody")
		require.ErrorIs(t, err, lb.ErrNotRanked, "%s: Rank", kind)
		_, err = board.Around(ctx, "nobody", 2)
		require.ErrorIs(t, err, lb.ErrNotRanked, "%s: Around", kind)
		_, err = board.Rank(ctx, "m")
		require.NoError(t, err, "%s: Rank of a member", kind)
	}
}
