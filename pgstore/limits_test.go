package pgstore

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// longName is n bytes of random printable ASCII a board name may hold:
// incompressible, as PostgreSQL's index sees it.
func longName(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 11))
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_%"
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteByte(chars[rng.IntN(len(chars))])
	}
	return sb.String()
}

// longPeriods is a window of one period whose ID is as long as a name may
// be.
type longPeriods struct{ name, id string }

func (w longPeriods) Name() string                        { return w.name }
func (w longPeriods) Period(time.Time) leaderboard.Period { return leaderboard.Period{ID: w.id} }

// TestLongestNames: a board, a window and a period ID each of the longest
// name New takes (200 bytes), with the longest member and id, go through
// every store path and every index a store keeps (submissions, standings,
// kept periods, sealed periods). Before New bounded names, a board name of
// 3,000 bytes was taken and every Submit with the store failed with
// PostgreSQL's "index row size exceeds btree maximum", no sentinel; one of
// 2,200 bytes failed with the longest member. Such names now fail in New.
func TestLongestNames(t *testing.T) {
	b := testredis.Real(t)
	ctx := context.Background()
	s := newStore(t)
	name := b.BoardName(t)
	name += "." + longName(200-len(name)-1, 1)
	require.Len(t, name, 200)
	_, err := leaderboard.New(b.Client, name+"x", leaderboard.WithStore(s))
	require.ErrorIs(t, err, leaderboard.ErrInvalidArgument, "a board name of 201 bytes")
	w := longPeriods{name: longName(200, 4), id: longName(200, 6)}
	lb, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate),
		leaderboard.WithWindows(leaderboard.AllTime(), w))
	require.NoError(t, err)
	_, err = lb.Rebuild(ctx)
	require.NoError(t, err)
	m := longName(leaderboard.MaxMemberLen, 3)
	id := longName(leaderboard.MaxIDLen, 5)
	_, err = lb.Submit(ctx, m, 1, leaderboard.WithID(id))
	require.NoError(t, err)
	res, err := lb.Submit(ctx, m, 1, leaderboard.WithID(id))
	require.NoError(t, err)
	require.Equal(t, 1.0, res.Score, "the id's retry counts once")
	require.NoError(t, lb.Set(ctx, m, 5, leaderboard.In(w)))
	require.NoError(t, lb.SubmitMany(ctx, map[string]float64{m: 2}))
	require.Empty(t, verifyDirty(t, lb))
	_, err = s.Seal(ctx, name, w.name, w.id, []leaderboard.Entry{{Member: m, Score: 7, Rank: 1}})
	require.NoError(t, err)
	b.Wipe(t, name)
	_, err = lb.Rebuild(ctx)
	require.NoError(t, err)
	for _, c := range []struct {
		w    leaderboard.Window
		want float64
	}{{leaderboard.AllTime(), 3}, {w, 7}} {
		st, err := lb.Rank(ctx, m, leaderboard.In(c.w))
		require.NoError(t, err)
		require.Equal(t, c.want, st.Score, "1, then 2 more; in w corrected to 5 between")
	}
	require.NoError(t, lb.Remove(ctx, m))
	require.NoError(t, lb.Delete(ctx))
}
