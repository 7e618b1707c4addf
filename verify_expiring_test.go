package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// expiringStore is a store whose Standings of one period first lets the
// period's retention end: the board's clock passes it and Redis expires
// the period's key (gone), as happens to a Verify that reads the period in
// the last moments of its retention.
type expiringStore struct {
	*memStore
	period string
	gone   func()
}

func (s *expiringStore) Standings(ctx context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	if q.Period == s.period && s.gone != nil {
		s.gone()
		s.gone = nil
	}
	return s.memStore.Standings(ctx, q, fn)
}

// TestVerifyPeriodExpiringAsRead: Verify read a period whose retention
// ended as it read it (Redis expired its key between the store's standings
// and Redis's), and reported every member of it missing from Redis, on a
// sound board. Such a period is gone, as Seal takes it: it is left out of
// the reports.
func TestVerifyPeriodExpiringAsRead(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		yesterday := lb.Daily().Period(future.Add(-24 * time.Hour))
		clock := &testClock{now: yesterday.End.Add(23*time.Hour + 59*time.Minute)}
		store := &expiringStore{memStore: newMemStore(), period: yesterday.ID}
		name := b.BoardName(t)
		board, err := lb.New(b.Client, name, lb.WithStore(store), lb.WithWindows(lb.Daily()), lb.WithClock(clock.Now))
		require.NoError(t, err)
		for _, at := range []time.Time{yesterday.Start.Add(time.Hour), clock.Now()} {
			_, err := board.Submit(ctx, "ann", 10, lb.WithTime(at))
			require.NoError(t, err)
		}
		c := b.Client.Client
		store.gone = func() {
			clock.Set(yesterday.End.Add(24 * time.Hour))
			require.NoError(t, c.Do(ctx, c.B().Del().Key("lb:{"+name+"}:daily:"+yesterday.ID).Build()).Error())
		}
		reports, err := board.Verify(ctx)
		require.NoError(t, err)
		for _, r := range reports {
			require.NotEqual(t, yesterday.ID, r.Period, "a period gone as it was read: %+v", r)
			require.True(t, r.Clean(), "%+v", r)
		}
		require.Len(t, reports, 1, "today")
	})
}
