package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// rows is the content of every table of s, to prove a refused call added
// nothing; without complete, standing_periods' complete column is left out
// (see overflow in TestBadInputWritesNoRow).
func (s *Store) rows(t *testing.T, complete bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range []string{s.tEntries, s.tPeriods, s.tKept, s.tKeptPeriods, s.tRemovals, s.tResets, s.tCorrections, s.tSubs} {
		row := "x::text"
		if table == s.tKeptPeriods && !complete {
			row = `(x.board, x."window", x.period, x.policy, x.score_order, x.period_start, x.period_end, x.created_at)::text`
		}
		var sum string
		err := s.pool.QueryRow(context.Background(),
			"SELECT count(*)::text || ' ' || coalesce(md5(string_agg("+row+", ',' ORDER BY "+row+")), '') FROM "+table+" x").Scan(&sum)
		require.NoError(t, err, table)
		out[table] = sum
	}
	return out
}

// TestBadInputWritesNoRow: every kind of bad input a board with pgstore
// can be given (text PostgreSQL cannot hold, scores out of range, bad
// options, a total Redis refuses, an ended ctx) returns its sentinel and
// leaves Redis and every table as they were, on plain and sharded boards,
// with and without a tie-break.
func TestBadInputWritesNoRow(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				t.Run(fmt.Sprintf("sharded=%v/tb=%v", sharded, tb), func(t *testing.T) {
					runBadInputWritesNoRow(t, b, sharded, tb)
				})
			}
		}
	})
}

func runBadInputWritesNoRow(t *testing.T, b *testredis.Backend, sharded, tb bool) {
	ctx := context.Background()
	s := newStore(t)
	name := b.BoardName(t)
	now := time.Now().UTC().Truncate(time.Second)
	opts := []leaderboard.Option{leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate),
		leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()), leaderboard.WithClock(func() time.Time { return now })}
	big := math.MaxFloat64
	if sharded {
		opts = append(opts, leaderboard.WithShards(0, 100))
	}
	if tb {
		order, err := leaderboard.EarlierFirst(leaderboard.TimeOrder{Epoch: now.Add(-time.Hour), Resolution: time.Second, MaxScore: 1000})
		require.NoError(t, err)
		opts = append(opts, leaderboard.WithTieBreak(order))
		big = 1000
	}
	board, err := leaderboard.New(b.Client, name, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = board.Delete(context.Background()) })
	_, err = board.Submit(ctx, "seed", big, leaderboard.WithID("seed"), leaderboard.WithData("Seed"))
	require.NoError(t, err)
	bt, err := board.NewBatcher(leaderboard.WithBatchWindow(time.Millisecond))
	require.NoError(t, err)
	defer func() { require.NoError(t, bt.Close(ctx)) }()
	type call struct {
		name string
		want error
		fn   func(ctx context.Context) error
	}
	submit := func(m string, v float64, o ...leaderboard.SubmitOption) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := board.Submit(ctx, m, v, o...); return err }
	}
	batched := func(m string, v float64, o ...leaderboard.SubmitOption) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := bt.Submit(ctx, m, v, o...); return err }
	}
	var calls []call
	for _, m := range []string{"a\x00b", "a\xffb", "", strings.Repeat("m", leaderboard.MaxMemberLen+1)} {
		calls = append(calls,
			call{fmt.Sprintf("Submit %q", m), leaderboard.ErrInvalidMember, submit(m, 1, leaderboard.WithID("xm"), leaderboard.WithData("d"))},
			call{fmt.Sprintf("Batcher %q", m), leaderboard.ErrInvalidMember, batched(m, 1)},
			call{fmt.Sprintf("SubmitMany %q", m), leaderboard.ErrInvalidMember, func(ctx context.Context) error {
				return board.SubmitMany(ctx, map[string]float64{"new": 1, m: 1})
			}},
			call{fmt.Sprintf("Set %q", m), leaderboard.ErrInvalidMember, func(ctx context.Context) error { return board.Set(ctx, m, 1) }},
			call{fmt.Sprintf("SetData %q", m), leaderboard.ErrInvalidMember, func(ctx context.Context) error { return board.SetData(ctx, m, "d") }})
	}
	for _, id := range []string{"i\x00d", "i\xffd", "", strings.Repeat("i", leaderboard.MaxIDLen+1)} {
		calls = append(calls,
			call{fmt.Sprintf("Submit id %q", id), leaderboard.ErrInvalidArgument, submit("new", 1, leaderboard.WithID(id), leaderboard.WithData("d"))},
			call{fmt.Sprintf("Batcher id %q", id), leaderboard.ErrInvalidArgument, batched("new", 1, leaderboard.WithID(id))})
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		calls = append(calls,
			call{fmt.Sprintf("Submit %v", v), leaderboard.ErrInvalidScore, submit("new", v, leaderboard.WithID("v"), leaderboard.WithData("d"))},
			call{fmt.Sprintf("Batcher %v", v), leaderboard.ErrInvalidScore, batched("new", v, leaderboard.WithID("v"))},
			call{fmt.Sprintf("Set %v", v), leaderboard.ErrInvalidScore, func(ctx context.Context) error { return board.Set(ctx, "seed", v) }})
	}
	// Totals Redis alone finds out of range, after the store took them.
	calls = append(calls,
		call{"Submit overflow", leaderboard.ErrInvalidScore, submit("seed", big, leaderboard.WithID("over"), leaderboard.WithData("d"))},
		call{"Batcher overflow", leaderboard.ErrInvalidScore, batched("seed", big, leaderboard.WithID("over2"))},
		call{"SubmitMany overflow", leaderboard.ErrInvalidScore, func(ctx context.Context) error {
			return board.SubmitMany(ctx, map[string]float64{"new": 1, "seed": big})
		}},
		call{"WithData too long", leaderboard.ErrInvalidArgument, submit("new", 1, leaderboard.WithData(strings.Repeat("d", leaderboard.MaxDataLen+1)))},
		call{"Set At", leaderboard.ErrInvalidArgument, func(ctx context.Context) error { return board.Set(ctx, "seed", 1, leaderboard.At(now)) }},
		call{"Reset At", leaderboard.ErrInvalidArgument, func(ctx context.Context) error { return board.Reset(ctx, leaderboard.At(now)) }},
		call{"RemoveBetween NaN", leaderboard.ErrInvalidArgument, func(ctx context.Context) error {
			_, err := board.RemoveBetween(ctx, math.NaN(), 1)
			return err
		}},
		call{"Remove empty", leaderboard.ErrInvalidMember, func(ctx context.Context) error { return board.Remove(ctx, "seed", "") }})
	ancient, wantAncient := time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC), leaderboard.ErrInvalidArgument // before timestamptz's range
	if tb {
		wantAncient = leaderboard.ErrPrecision // before the tie-break's epoch, found first
	}
	calls = append(calls,
		call{"Submit before PostgreSQL's times", wantAncient, submit("new", 1, leaderboard.WithTime(ancient), leaderboard.WithData("d"))},
		call{"Batcher before PostgreSQL's times", wantAncient, batched("new", 1, leaderboard.WithTime(ancient))})
	if tb {
		calls = append(calls,
			call{"Submit beyond MaxScore", leaderboard.ErrPrecision, submit("new", 1001, leaderboard.WithID("p"))},
			call{"Set beyond MaxScore", leaderboard.ErrPrecision, func(ctx context.Context) error { return board.Set(ctx, "new", 1001) }})
	}
	// A total Redis alone finds out of range, of 2^1022 or more, is one
	// the store could not keep standings of: the retraction takes its row
	// back, and the period's standings stay aggregated from the log
	// (documented at Retract): complete is not compared after it.
	before, rows, rowsBut := b.Snapshot(t, name), s.rows(t, true), s.rows(t, false)
	complete := true
	for _, c := range calls {
		require.ErrorIs(t, c.fn(ctx), c.want, c.name)
		require.Equal(t, before, b.Snapshot(t, name), "%s wrote to Redis", c.name)
		complete = complete && (tb || !strings.HasSuffix(c.name, " overflow"))
		if complete {
			require.Equal(t, rows, s.rows(t, true), "%s wrote to the store", c.name)
		} else {
			require.Equal(t, rowsBut, s.rows(t, false), "%s wrote to the store", c.name)
		}
	}
	rows = s.rows(t, true)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	for what, fn := range map[string]func(ctx context.Context) error{
		"Submit":        submit("new", 1, leaderboard.WithID("e"), leaderboard.WithData("d")),
		"Batcher":       batched("new", 1),
		"SubmitMany":    func(ctx context.Context) error { return board.SubmitMany(ctx, map[string]float64{"new": 1}) },
		"Set":           func(ctx context.Context) error { return board.Set(ctx, "new", 1) },
		"Remove":        func(ctx context.Context) error { return board.Remove(ctx, "seed") },
		"RemoveBetween": func(ctx context.Context) error { _, err := board.RemoveBetween(ctx, -1, 1e300); return err },
		"Reset":         func(ctx context.Context) error { return board.Reset(ctx) },
		"Delete":        func(ctx context.Context) error { return board.Delete(ctx) },
	} {
		err := fn(ended)
		require.True(t, errors.Is(err, context.Canceled), "%s: %v", what, err)
		require.False(t, errors.Is(err, leaderboard.ErrPending), "%s: %v", what, err)
		require.Equal(t, before, b.Snapshot(t, name), "%s with an ended ctx wrote to Redis", what)
		require.Equal(t, rows, s.rows(t, true), "%s with an ended ctx wrote to the store", what)
	}
}
