package pgstore

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestRemoveMembersTheStoreCannotHold: a member the store refuses (text
// that is not UTF-8, or holds a NUL byte) can still be in Redis, with
// scores or data written before the board had a store. Remove and
// RemoveBetween take it out of Redis and record only the others in the
// store. SetData refuses such a member with ErrInvalidMember, as Submit
// does; it took it before, data of a member that can never score. Before, the store refused the
// whole removal with ErrInvalidMember: Remove could never take such a
// member's data, and RemoveBetween, which names no member, failed on every
// call and removed nothing.
func TestRemoveMembersTheStoreCannotHold(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]leaderboard.Option{"plain": nil, "sharded": {leaderboard.WithShards(0, 100)}} {
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				s := newStore(t)
				name := b.BoardName(t)
				bare, err := leaderboard.New(b.Client, name, opts...)
				require.NoError(t, err)
				for m, v := range map[string]float64{"a\x00b": 5, "\xff\xfe": 7} {
					_, err = bare.Submit(ctx, m, v, leaderboard.WithData("old"))
					require.NoError(t, err)
				}
				board, err := leaderboard.New(b.Client, name, append(opts, leaderboard.WithStore(s))...)
				require.NoError(t, err)
				t.Cleanup(func() { _ = board.Delete(ctx) })
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				for m, v := range map[string]float64{"a\x00b": 5, "\xff\xfe": 7} {
					_, err = bare.Submit(ctx, m, v) // after the Rebuild, as before a store
					require.NoError(t, err)
				}
				for _, m := range []string{"ok", "ok2", "ok3"} {
					_, err = board.Submit(ctx, m, 6)
					require.NoError(t, err)
				}
				before := b.Snapshot(t, name)
				err = board.SetData(ctx, "d\x00", "data")
				require.ErrorIs(t, err, leaderboard.ErrInvalidMember, "a member that can never score here")
				require.Equal(t, before, b.Snapshot(t, name), "SetData refused wrote nothing")
				require.NoError(t, bare.SetData(ctx, "c\x00", "data")) // as before a store

				require.NoError(t, board.Remove(ctx, "c\x00"))
				require.NoError(t, board.Remove(ctx, "\xff\xfe", "ok3"))
				sts, err := board.Ranks(ctx, []string{"c\x00", "\xff\xfe", "ok3"}, leaderboard.IncludeData())
				require.NoError(t, err)
				for _, st := range sts {
					require.Equal(t, leaderboard.Standing{Entry: leaderboard.Entry{Member: st.Member}, Total: 3}, st)
				}
				n, err := board.RemoveBetween(ctx, math.Inf(-1), 6)
				require.NoError(t, err)
				require.EqualValues(t, 3, n, "a\\x00b, ok and ok2")
				c, err := board.Count(ctx)
				require.NoError(t, err)
				require.Zero(t, c)
				require.Empty(t, verifyDirty(t, board), "the store recorded the removals of the members it holds")
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				c, err = board.Count(ctx)
				require.NoError(t, err)
				require.Zero(t, c, "a Rebuild brings none back")
			})
		}
	})
}
