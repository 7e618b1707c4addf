package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// driftedStore keeps standings that drifted from its log (drift names
// the members) and says so when checked.
type driftedStore struct {
	*memStore
	drift   []string
	checked []lb.StandingsQuery
}

func (s *driftedStore) CheckStandings(_ context.Context, q lb.StandingsQuery, repair bool) (lb.StandingsCheck, error) {
	s.checked = append(s.checked, q)
	return lb.StandingsCheck{Kept: true, Members: 1, Differ: s.drift, DifferCount: int64(len(s.drift))}, nil
}

// TestVerifyChecksTheStoreAgainstItsLog: Verify asks a StandingsChecker to
// check each period's kept standings against its log, and a drift there
// makes the report unclean even when Redis equals the store's standings.
func TestVerifyChecksTheStoreAgainstItsLog(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	store := &driftedStore{memStore: newMemStore()}
	board, _ := newBoard(t, b, lb.WithStore(store), lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithClock(func() time.Time { return future }))
	_, err := board.Submit(ctx, "p", 1)
	require.NoError(t, err)
	reports, err := board.Verify(ctx)
	require.NoError(t, err)
	require.Len(t, store.checked, len(reports), "every live period is checked")
	require.Equal(t, "daily", store.checked[1].Window)
	require.Equal(t, lb.Daily().Period(future).ID, store.checked[1].Period)
	for _, r := range reports {
		require.True(t, r.Clean(), "%+v", r)
	}
	store.drift = []string{"p"}
	reports, err = board.Verify(ctx)
	require.NoError(t, err)
	for _, r := range reports {
		require.False(t, r.Clean(), "kept standings that left the log are not clean")
		require.Equal(t, []string{"p"}, r.Store.Differ)
	}
}

// requireVerified fails unless Verify finds every window of board clean:
// its store and Redis agree.
func requireVerified(t *testing.T, board *lb.Leaderboard) {
	t.Helper()
	reps, err := board.Verify(context.Background())
	require.NoError(t, err)
	for _, r := range reps {
		require.True(t, r.Clean(), "%+v", r)
	}
}
