package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestEveryWindowClosedWritesNothing: WithData's doc says a submission
// whose every window period has closed sets no data, and Result.Closed's
// that nothing was written; so its WithID id is not recorded either, and a
// later submission with that id is applied. On every kind of board, by
// Submit and by a Batcher, on every backend.
func TestEveryWindowClosedWritesNothing(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range dataBoards {
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				name := shardName(t, b)
				board, err := lb.New(b.Client, name, append(opts, lb.WithWindows(lb.Daily()),
					lb.WithRetention(time.Hour), lb.WithClock(fixed(future)))...)
				require.NoError(t, err)
				bt, err := board.NewBatcher()
				require.NoError(t, err)
				defer func() { require.NoError(t, bt.Close(ctx)) }()
				late := lb.WithTime(future.Add(-72 * time.Hour))
				for what, submit := range map[string]func(...lb.SubmitOption) (lb.Result, error){
					"Submit":  func(o ...lb.SubmitOption) (lb.Result, error) { return board.Submit(ctx, "late", 7, o...) },
					"Batcher": func(o ...lb.SubmitOption) (lb.Result, error) { return bt.Submit(ctx, "late", 7, o...) },
				} {
					for _, o := range [][]lb.SubmitOption{{late, lb.WithData("Late")}, {late, lb.WithID("m-" + what)}} {
						res, err := submit(o...)
						require.NoError(t, err, what)
						require.True(t, res.Windows[0].Closed, what)
						require.Empty(t, boardKeys(t, b, name), "%s: every window closed writes nothing", what)
					}
					res, err := submit(lb.WithID("m-" + what))
					require.NoError(t, err, what)
					require.False(t, res.Duplicate, "%s: the closed submission's id was not recorded", what)
					require.NoError(t, board.Delete(ctx))
				}
			})
		}
	})
}
