package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestSealAfterBatchedWrites: a Batcher's submission made just before
// midnight waited for its batch's window (up to a minute) and landed in the
// day after Seal, run once the clock skew had passed after midnight, had
// sealed it: the sealed standings and the hook missed it for good. A batch
// holding a write to a period is sent by that period's end, so that the
// write lands within the skew Seal waits, as a Submit's does.
func TestSealAfterBatchedWrites(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		day := lb.Daily().Period(future.Add(-24 * time.Hour))
		clock := &testClock{now: day.End.Add(-20 * time.Millisecond)}
		board, _ := newBoard(t, b, lb.WithStore(newMemStore()), lb.WithWindows(lb.Daily()), lb.WithClock(clock.Now))
		_, err := board.Rebuild(ctx)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "ann", 10)
		require.NoError(t, err)
		bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
		require.NoError(t, err)
		type answer struct {
			res lb.Result
			err error
		}
		got := make(chan answer, 1)
		go func() {
			res, err := bt.Submit(ctx, "bob", 20)
			got <- answer{res, err}
		}()
		var a answer
		select {
		case a = <-got:
		case <-time.After(5 * time.Second):
			t.Error("the batch holding a write to the day was not sent by the day's end")
		}

		clock.Set(day.End.Add(time.Second)) // the default skew has passed
		sealed, err := board.Seal(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, bt.Close(ctx))
		if a.res.Windows == nil {
			a = <-got
		}
		require.NoError(t, a.err)
		require.Equal(t, day.ID, a.res.Windows[0].Period)
		want := []lb.Entry{{Member: "bob", Score: 20, Rank: 1}, {Member: "ann", Score: 10, Rank: 2}}
		require.Equal(t, []lb.SealedPeriod{{Window: "daily", Period: day.ID, Entries: want}}, sealed)
	})
}

// TestSealHookFailingHalfWay: a hook that fails on the first period Seal
// seals stops it there (that period sealed, its hook not run again); the
// next Seal seals the rest, each once, none twice and none skipped.
func TestSealHookFailingHalfWay(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		clock := &testClock{now: future}
		board, _ := newBoard(t, b, lb.WithStore(newMemStore()), lb.WithWindows(lb.Daily(), lb.Weekly()),
			lb.WithRetention(10*24*time.Hour), lb.WithClock(clock.Now))
		_, err := board.Rebuild(ctx)
		require.NoError(t, err)
		days := []time.Time{future.Add(-48 * time.Hour), future.Add(-24 * time.Hour)}
		for i, at := range days {
			_, err := board.Submit(ctx, fmt.Sprintf("m%d", i), float64(i+1), lb.WithTime(at))
			require.NoError(t, err)
		}
		var hooked []string
		fail := errors.New("rewards down")
		hook := func(_ context.Context, p lb.SealedPeriod) error {
			hooked = append(hooked, p.Window+"/"+p.Period)
			if len(hooked) == 1 {
				return fail
			}
			return nil
		}
		first, err := board.Seal(ctx, hook)
		require.ErrorIs(t, err, fail)
		require.Len(t, first, 1)
		rest, err := board.Seal(ctx, hook)
		require.NoError(t, err)
		var all []string
		for _, p := range append(first, rest...) {
			all = append(all, p.Window+"/"+p.Period)
		}
		require.Equal(t, all, hooked, "each sealed period's hook ran once")
		want := []string{"daily/" + lb.Daily().Period(days[0]).ID, "daily/" + lb.Daily().Period(days[1]).ID}
		for _, at := range days {
			if w := lb.Weekly().Period(at); !clock.Now().Before(w.End.Add(time.Second)) {
				want = append(want, "weekly/"+w.ID)
			}
		}
		require.ElementsMatch(t, slices.Compact(want), all)
		again, err := board.Seal(ctx, hook)
		require.NoError(t, err)
		require.Empty(t, again)
	})
}
