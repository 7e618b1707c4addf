package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// errNoBang is checkingStore's refusal.
var errNoBang = fmt.Errorf("%w: no '!' here", lb.ErrInvalidMember)

// checkingStore is a Store and a SubmissionChecker, and nothing more (no
// Corrector): it refuses members holding '!'.
type checkingStore struct{ lb.Store }

func (checkingStore) CheckSubmission(sub lb.Submission) error {
	if strings.Contains(sub.Member, "!") {
		return errNoBang
	}
	return nil
}

// TestSubmissionChecker: every write of a score asks the store first
// (Submit, SubmitMany, a Batcher's Submit, and Set, even on a store that
// is no Corrector, which Set does not reach: what Submit refuses, Set
// refuses), and its refusal, wrapped as a store error, sends nothing.
func TestSubmissionChecker(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, _ := newBoard(t, b, lb.WithStore(checkingStore{plainOnlyStore{newMemStore()}}))
		bt, err := board.NewBatcher()
		require.NoError(t, err)
		defer func() { require.NoError(t, bt.Close(ctx)) }()
		calls := b.Client.Calls()
		for what, write := range map[string]func() error{
			"Submit":         func() error { _, err := board.Submit(ctx, "a!", 1); return err },
			"Submit WithID":  func() error { _, err := board.Submit(ctx, "a!", 1, lb.WithID("x")); return err },
			"SubmitMany":     func() error { return board.SubmitMany(ctx, map[string]float64{"ok": 1, "a!": 2}) },
			"Batcher.Submit": func() error { _, err := bt.Submit(ctx, "a!", 1); return err },
			"Set":            func() error { return board.Set(ctx, "a!", 5) },
		} {
			err := write()
			require.ErrorIs(t, err, errNoBang, what)
			require.ErrorIs(t, err, lb.ErrInvalidMember, what)
			require.Contains(t, err.Error(), "store", what)
		}
		require.Equal(t, calls, b.Client.Calls(), "calls to Redis for refused writes")
		_, err = board.Rank(ctx, "a!")
		require.ErrorIs(t, err, lb.ErrNotRanked)
		require.NoError(t, board.Set(ctx, "b", 1))
	})
}
