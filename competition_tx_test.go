package leaderboard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// flushScripts empties the script cache of every node of b, as a restart
// or a failover to a replica that never ran the scripts would.
func flushScripts(t *testing.T, b *testredis.Backend) {
	t.Helper()
	for _, n := range b.Client.Nodes() {
		require.NoError(t, n.Do(context.Background(), n.B().ScriptFlush().Build()).Error())
	}
}

// A page past the first position under Competition ranks is one MULTI
// holding a small script beside the plain ZRANGE. When the server has lost
// its scripts, the script fails with NOSCRIPT inside EXEC: the read sends
// the transaction again with EVAL, one round trip more, once, and returns
// the same ranks, as AroundScore's script does (EVALSHA, then EVAL).
func TestCompetitionTxScriptFlushed(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, _ := newBoard(t, b, lb.WithRanking(lb.Competition))
		for m, s := range map[string]float64{"a": 50, "b": 40, "c": 40, "d": 40, "e": 30, "f": 20} {
			_, err := board.Submit(ctx, m, s)
			require.NoError(t, err)
		}
		// Board order: a 50, then d, c, b at 40 (equal scores by member
		// bytes, descending on a HighestFirst board), e 30, f 20.
		wantPage := []lb.Entry{{Member: "c", Score: 40, Rank: 2}, {Member: "b", Score: 40, Rank: 2}}
		wantRange := []lb.Entry{{Member: "b", Score: 40, Rank: 2}, {Member: "e", Score: 30, Rank: 5}, {Member: "f", Score: 20, Rank: 6}}
		wantAround := append(append([]lb.Entry{}, wantPage...), wantRange[1:]...)
		reads := map[string]func(t *testing.T){
			"Page": func(t *testing.T) {
				p, err := board.Page(ctx, 2, 2)
				require.NoError(t, err)
				require.Equal(t, wantPage, p.Entries)
				require.EqualValues(t, 6, p.Total)
			},
			"Range": func(t *testing.T) {
				es, err := board.Range(ctx, 4, 6)
				require.NoError(t, err)
				require.Equal(t, wantRange, es)
			},
			"AroundScore": func(t *testing.T) {
				r, es, err := board.AroundScore(ctx, 35, 2)
				require.NoError(t, err)
				require.EqualValues(t, 5, r)
				require.Equal(t, wantAround, es)
			},
		}
		for name, read := range reads {
			// Lost, then loaded again by that read. The servers are
			// shared with other packages' tests, which may load the script
			// again between the flush and the read (one round trip then):
			// a few tries, one of which must meet the lost script.
			lost := false
			for try := 0; try < 5 && !lost; try++ {
				flushScripts(t, b)
				calls := b.Client.Calls()
				read(t)
				trips := b.Client.Calls() - calls
				require.Contains(t, []int64{1, 2}, trips, "round trips of %s after a flush", name)
				lost = trips == 2
			}
			require.True(t, lost, "%s never met its script lost", name)
			calls := b.Client.Calls()
			read(t)
			require.Equal(t, int64(1), b.Client.Calls()-calls, "round trips of %s, loaded again", name)
		}
	})
}
