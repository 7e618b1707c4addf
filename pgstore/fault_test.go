package pgstore

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/durabletest"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestRebuildAfterRedisKilled kills a Redis under a submit load and rebuilds
// the board from PostgreSQL (see durabletest.KillAndRebuild).
func TestRebuildAfterRedisKilled(t *testing.T) {
	durabletest.KillAndRebuild(t, newStore(t), "pgfault")
}

// TestSubmitWithPostgresDown: with PostgreSQL unreachable, Submit fails with
// a clear error and Redis is untouched.
func TestSubmitWithPostgresDown(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		live := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(live), leaderboard.WithPolicy(leaderboard.Accumulate))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "p", 1)
		require.NoError(t, err)
		before := b.Snapshot(t, name)

		// A pool pointing at a port where nothing listens.
		cfg, err := pgxpool.ParseConfig("postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1")
		require.NoError(t, err)
		down, err := pgxpool.NewWithConfig(ctx, cfg)
		require.NoError(t, err)
		t.Cleanup(down.Close)
		dead, err := New(down, WithTablePrefix(live.prefix))
		require.NoError(t, err)
		board, err = leaderboard.New(b.Client, name, leaderboard.WithStore(dead), leaderboard.WithPolicy(leaderboard.Accumulate))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "p", 5, leaderboard.WithID("x"))
		require.Error(t, err)
		require.ErrorContains(t, err, "leaderboard: submit: store: pgstore: append")
		require.False(t, errors.Is(err, leaderboard.ErrPending), "nothing is durable")
		require.False(t, errors.Is(err, rueidis.Nil))
		require.Equal(t, before, b.Snapshot(t, name), "Redis must be untouched")
		require.ErrorContains(t, board.SubmitMany(ctx, map[string]float64{"q": 1}), "store")
		require.Equal(t, before, b.Snapshot(t, name), "Redis must be untouched")
	})
}
