package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestIDSubmission: the submission an id names, as Append stored it (times
// to the microsecond, in UTC); none for an unknown id, another board's, or
// an empty one; bad text is ErrInvalidArgument.
func TestIDSubmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	at, received := t0.Add(1500*time.Nanosecond), t0.Add(time.Hour)
	_, err := s.Append(ctx, leaderboard.Submission{Board: "replay", ID: "a", Member: "m", Score: 0.1, At: at, Received: received})
	require.NoError(t, err)
	_, err = s.Append(ctx, leaderboard.Submission{Board: "replay", ID: "a", Member: "m", Score: 9, At: t0, Received: t0})
	require.NoError(t, err)
	sub, ok, err := s.IDSubmission(ctx, "replay", "a")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, leaderboard.Submission{Board: "replay", ID: "a", Member: "m", Score: 0.1,
		At: at.Truncate(time.Microsecond).UTC(), Received: received.UTC()}, sub, "the first, as stored")
	for _, c := range [][2]string{{"replay", "b"}, {"other", "a"}, {"replay", ""}} {
		_, ok, err := s.IDSubmission(ctx, c[0], c[1])
		require.NoError(t, err)
		require.False(t, ok, "%v", c)
	}
	_, _, err = s.IDSubmission(ctx, "replay", "\xff")
	require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
}

// TestPendingRetryOnStore: a submission stored but not applied in Redis
// (ErrPending) and retried with its id, another score and no WithTime
// after the day turned is applied as the store holds it: Verify is clean
// and a Rebuild gives the board Redis had.
func TestPendingRetryOnStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		day := time.Now().UTC().Truncate(24 * time.Hour)
		clock := day.Add(-time.Second)
		name := b.BoardName(t)
		// The ctx ends once the store holds the submission, before Redis.
		gone, cancel := context.WithCancel(ctx)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(cancelAfterAppend{newStore(t), cancel}),
			leaderboard.WithPolicy(leaderboard.Accumulate), leaderboard.WithWindows(leaderboard.Daily(), leaderboard.AllTime()),
			leaderboard.WithClock(func() time.Time { return clock }))
		require.NoError(t, err)
		_, err = board.Submit(gone, "p", 2, leaderboard.WithID("b"))
		require.ErrorIs(t, err, leaderboard.ErrPending)
		clock = day.Add(time.Second)
		res, err := board.Submit(ctx, "p", 7, leaderboard.WithID("b"))
		require.NoError(t, err)
		require.False(t, res.Duplicate)
		require.Equal(t, 2.0, res.Score)
		requireVerify(t, board, true)
		yesterday := leaderboard.At(day.Add(-time.Second))
		before := boardView(t, board, yesterday)
		b.Wipe(t, name)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		require.Equal(t, before, boardView(t, board, yesterday))
		requireVerify(t, board, true)
	})
}

// cancelAfterAppend ends a ctx (cancel) after each Append: a Submit whose
// ctx ends between the store and Redis, stored and not applied
// (ErrPending).
type cancelAfterAppend struct {
	*Store
	cancel context.CancelFunc
}

func (c cancelAfterAppend) Append(ctx context.Context, sub leaderboard.Submission) (bool, error) {
	dup, err := c.Store.Append(ctx, sub)
	c.cancel()
	return dup, err
}
