package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// TestIDReceived: the Received an id was appended with, truncated to the
// microsecond, from Append and both AppendBatch paths; the database's clock
// when Received was zero, and for rows from before migration 4.
func TestIDReceived(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	r1 := t0.Add(-48*time.Hour + 1500*time.Nanosecond) // a fake clock, far from the database's
	r2 := t0.Add(-24 * time.Hour)
	_, err := s.Append(ctx, leaderboard.Submission{Board: "ids", ID: "a", Member: "m", Score: 1, At: t0.Add(-72 * time.Hour), Received: r1})
	require.NoError(t, err)
	_, err = s.AppendBatch(ctx, []leaderboard.Submission{
		{Board: "ids", ID: "b", Member: "m", Score: 1, At: t0, Received: r2},
		{Board: "other", ID: "a", Member: "m", Score: 1, At: t0, Received: r2},
	})
	require.NoError(t, err)
	before := time.Now()
	_, err = s.Append(ctx, leaderboard.Submission{Board: "ids", ID: "c", Member: "m", Score: 1, At: t0})
	require.NoError(t, err)
	after := time.Now()

	for _, c := range []struct {
		board, id string
		want      time.Time
	}{
		{"ids", "a", r1.Truncate(time.Microsecond)},
		{"ids", "b", r2},
		{"other", "a", r2},
	} {
		got, member, ok, err := s.IDReceived(ctx, c.board, c.id)
		require.NoError(t, err)
		require.True(t, ok, "%s/%s", c.board, c.id)
		require.Equal(t, "m", member)
		require.True(t, c.want.Equal(got), "%s/%s: %v, want %v", c.board, c.id, got, c.want)
		require.Equal(t, time.UTC, got.Location())
	}
	got, _, ok, err := s.IDReceived(ctx, "ids", "c")
	require.NoError(t, err)
	require.True(t, ok)
	// The database's clock, on this machine: within a second of ours.
	require.WithinRange(t, got, before.Add(-time.Second), after.Add(time.Second))

	// A row from before migration 4 has no received: created_at counts.
	_, err = s.pool.Exec(ctx, "UPDATE "+s.tSubs+" SET received = NULL, created_at = $1 WHERE board = 'ids' AND id = 'a'", r2)
	require.NoError(t, err)
	got, _, ok, err = s.IDReceived(ctx, "ids", "a")
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, r2.Equal(got), "%v", got)

	for _, c := range [][2]string{{"ids", "nope"}, {"nobody", "a"}, {"ids", ""}} {
		_, _, ok, err := s.IDReceived(ctx, c[0], c[1])
		require.NoError(t, err)
		require.False(t, ok, "%v", c)
	}
	_, _, _, err = s.IDReceived(ctx, "ids", "\xff")
	require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
	err = s.IDsSince(ctx, "a\x00", time.Time{}, func(string, string, time.Time) error { return nil })
	require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
}

// TestIDsSince: every id of the board received at or after since, with its
// member and Received; bounds exact to the microsecond; an error from fn comes back as
// it is; the index serves it.
func TestIDsSince(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	var subs []leaderboard.Submission
	want := map[string]time.Time{}
	for i := range 50 {
		r := t0.Add(time.Duration(i) * time.Minute)
		subs = append(subs, leaderboard.Submission{Board: "ids", ID: fmt.Sprintf("id-%d", i), Member: fmt.Sprintf("m%d", i%7), Score: 1, At: t0, Received: r})
		want[fmt.Sprintf("id-%d", i)] = r
	}
	// Rows without ids, and another board's, are never listed.
	subs = append(subs, leaderboard.Submission{Board: "ids", Member: "m", Score: 1, At: t0, Received: t0.Add(time.Hour)},
		leaderboard.Submission{Board: "other", ID: "id-x", Member: "m", Score: 1, At: t0, Received: t0.Add(time.Hour)})
	_, err := s.AppendBatch(ctx, subs)
	require.NoError(t, err)

	since := func(at time.Time) map[string]time.Time {
		t.Helper()
		got := map[string]time.Time{}
		require.NoError(t, s.IDsSince(ctx, "ids", at, func(id, member string, received time.Time) error {
			require.NotContains(t, got, id)
			var i int
			_, err := fmt.Sscanf(id, "id-%d", &i)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("m%d", i%7), member, "the member of %s", id)
			got[id] = received
			return nil
		}))
		return got
	}
	for _, c := range []struct {
		since time.Time
		first int
	}{
		{time.Time{}, 0},
		{t0, 0},
		{t0.Add(20 * time.Minute), 20},
		{t0.Add(20*time.Minute - time.Nanosecond), 20},
		{t0.Add(20*time.Minute + time.Nanosecond), 21}, // after id-20's microsecond
		{t0.Add(time.Hour), 50},
	} {
		w := map[string]time.Time{}
		for i := c.first; i < 50; i++ {
			w[fmt.Sprintf("id-%d", i)] = want[fmt.Sprintf("id-%d", i)]
		}
		got := since(c.since)
		require.Equal(t, len(w), len(got), "since %v", c.since)
		for id, r := range w {
			require.True(t, r.Equal(got[id]), "since %v: %s received %v, want %v", c.since, id, got[id], r)
		}
	}

	stop := errors.New("stop")
	calls := 0
	err = s.IDsSince(ctx, "ids", time.Time{}, func(string, string, time.Time) error {
		calls++
		return stop
	})
	require.Equal(t, stop, err)
	require.Equal(t, 1, calls)

	// A table this small is read whole unless that is ruled out.
	tx, err := s.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "SET LOCAL enable_seqscan = off")
	require.NoError(t, err)
	rows, err := tx.Query(ctx, "EXPLAIN "+s.idsSinceSQL(), "ids", t0.Add(49*time.Minute))
	require.NoError(t, err)
	var plan []string
	var line string
	_, err = pgxForEach(rows, &line, func() { plan = append(plan, line) })
	require.NoError(t, err)
	require.Contains(t, strings.Join(plan, "\n"), "Index Scan using "+s.tSubs+"_board_received_idx")
}
