package leaderboard_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// extraRowsStore is a memStore whose Standings also stream rows no write
// could have made (a store's bug, a row edited by hand).
type extraRowsStore struct {
	*memStore
	extra []lb.StoredStanding
}

func (s extraRowsStore) Standings(ctx context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	if err := s.memStore.Standings(ctx, q, fn); err != nil {
		return err
	}
	for _, st := range s.extra {
		if err := fn(st); err != nil {
			return err
		}
	}
	return nil
}

// TestRebuildRefusesWhatSubmitRefuses: a standing the board refuses
// (a member Submit refuses, a score that is not a number) is left out of
// a Rebuild and listed in its report, and Verify leaves it out too.
func TestRebuildRefusesWhatSubmitRefuses(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			t.Run(map[bool]string{false: "plain", true: "sharded"}[sharded], func(t *testing.T) {
				ctx := context.Background()
				long := strings.Repeat("x", lb.MaxMemberLen+1)
				store := extraRowsStore{memStore: newMemStore(), extra: []lb.StoredStanding{
					{Member: "", Score: 1, At: future},
					{Member: long, Score: 2, At: future},
					{Member: "nan", Score: math.NaN(), At: future},
				}}
				opts := []lb.Option{lb.WithStore(store), lb.WithClock(fixed(future))}
				if sharded {
					opts = append(opts, lb.WithShards(0, 3))
				}
				board, err := lb.New(b.Client, shardName(t, b), opts...)
				require.NoError(t, err)
				_, err = board.Submit(ctx, "ok", 5)
				require.NoError(t, err)

				rep, err := board.Rebuild(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(1), rep.Members)
				require.ElementsMatch(t, []string{"alltime/alltime/", "alltime/alltime/" + long, "alltime/alltime/nan"}, rep.Refused)
				top, err := board.Top(ctx, 10)
				require.NoError(t, err)
				require.Len(t, top, 1)
				require.Equal(t, "ok", top[0].Member)
				n, err := board.Count(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(1), n)
				reps, err := board.Verify(ctx)
				require.NoError(t, err)
				for _, r := range reps {
					require.True(t, r.Clean(), "%+v", r)
				}
			})
		}
	})
}
