package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestTimeTimestamptzCannotHold: a WithTime before 4714-11-24 BC, which
// timestamptz cannot hold, is bad input: ErrInvalidArgument, no row, no
// key, and it never joins a Batcher's batch. It was sent to PostgreSQL,
// which failed the append with "timestamp out of range", no sentinel, and
// in a Batcher failed the batch's one append for every caller in it. The
// first instant timestamptz holds is stored.
func TestTimeTimestamptzCannotHold(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s))
		require.NoError(t, err)
		ancient := time.Date(-4713, time.November, 23, 23, 59, 59, 999999000, time.UTC)
		_, err = board.Submit(ctx, "m", 1, leaderboard.WithTime(ancient))
		require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
		require.Zero(t, boardRows(t, s, name))
		require.Empty(t, b.Snapshot(t, name))

		bt, err := board.NewBatcher(leaderboard.WithBatchWindow(100 * time.Millisecond))
		require.NoError(t, err)
		var wg sync.WaitGroup
		var good, bad error
		wg.Add(2)
		go func() { defer wg.Done(); _, good = bt.Submit(ctx, "good", 1) }()
		go func() { defer wg.Done(); _, bad = bt.Submit(ctx, "bad", 1, leaderboard.WithTime(ancient)) }()
		wg.Wait()
		require.NoError(t, bt.Close(ctx))
		require.NoError(t, good, "another caller's bad time is not this caller's")
		require.ErrorIs(t, bad, leaderboard.ErrInvalidArgument)
		require.Equal(t, 1, boardRows(t, s, name))

		_, err = s.Append(ctx, leaderboard.Submission{Board: name, Member: "m", Score: 1, At: time.Now(), Received: ancient})
		require.ErrorIs(t, err, leaderboard.ErrInvalidArgument, "Received too")
		_, err = s.Append(ctx, leaderboard.Submission{Board: name, Member: "first", Score: 1, At: ancient.Add(time.Microsecond)})
		require.NoError(t, err, "the first instant timestamptz holds")
		require.Equal(t, 2, boardRows(t, s, name))
	})
}
