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

// TestSubmissionChecker: the writes that reach the store ask it first
// (Submit, SubmitMany, a Batcher's Submit), and its refusal, wrapped as a
// store error, sends nothing; Set on a store that is no Corrector does not
// reach the store, and is not refused by it.
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
		} {
			err := write()
			require.ErrorIs(t, err, errNoBang, what)
			require.ErrorIs(t, err, lb.ErrInvalidMember, what)
			require.Contains(t, err.Error(), "store", what)
		}
		require.Equal(t, calls, b.Client.Calls(), "calls to Redis for refused writes")
		require.NoError(t, board.Set(ctx, "a!", 5), "Set does not reach a store that is no Corrector")
		st, err := board.Rank(ctx, "a!")
		require.NoError(t, err)
		require.Equal(t, 5.0, st.Score)
		require.NoError(t, board.Set(ctx, "b", 1))
	})
}
