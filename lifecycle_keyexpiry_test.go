package leaderboard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// periodOfKey finds the window and period ID a key of a windowed board
// names ("...:daily:2026-11-30", "...:daily:2026-11-30:v0:17"), and
// whether the key is one of the period's own sorted sets (its key, a
// shard's, a partition's), which carry the period's expiry exactly; the
// rest (a hot top's mirror, its turn, a shard's recent versions) expire by
// it.
func periodOfKey(k string, windows []string) (window, id string, exact, ok bool) {
	segs := strings.Split(k, ":")
	for i := len(segs) - 2; i >= 0; i-- {
		if !slices.Contains(windows, segs[i]) {
			continue
		}
		rest := segs[i+2:]
		mirror := slices.Contains(segs[:i], "") // "::topk", "::turn"
		return segs[i], segs[i+1], len(rest) == 0 && !mirror, true
	}
	return "", "", false, false
}

// TestPeriodKeysExpireWithTheirPeriod: every key a windowed board keeps
// for a period expires with that period, by the period's own end plus the
// retention: the period's sorted sets (its key, shards, partitions) at
// that instant, the keys beside them (a hot top's mirror and turn, a
// shard's recent versions) no later, whatever kind of write last rewrote
// them; and every other key is one the docs say lasts (data, markers) or
// expires (ids, version clocks) no later than the newest period.
func TestPeriodKeysExpireWithTheirPeriod(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range expiryKinds {
			t.Run(kind.name, func(t *testing.T) { runPeriodKeysExpire(t, b, kind.opts) })
		}
	})
}

func runPeriodKeysExpire(t *testing.T, b *testredis.Backend, kind []lb.Option) {
	ctx := context.Background()
	clock := future
	name := shardName(t, b)
	const retention = 36 * time.Hour
	windows := []lb.Window{lb.Daily(), lb.Weekly(), lb.Monthly()}
	opts := slices.Concat([]lb.Option{lb.WithWindows(windows...), lb.WithRetention(retention),
		lb.WithDedupeWindow(time.Hour), lb.WithClock(func() time.Time { return clock })}, kind)
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	want := map[string]int64{} // window:id -> expiry
	for d := 0; d < 20; d++ {
		for _, w := range windows {
			p := w.Period(clock)
			want[w.Name()+":"+p.ID] = p.End.Add(retention).UnixMilli()
		}
		writeEveryKind(t, ctx, board, d)
		clock = clock.Add(24 * time.Hour)
	}
	names := []string{"daily", "weekly", "monthly"}
	var bad []string
	exactly := map[string]int{} // window -> its periods' sorted sets seen
	for k, at := range keyExpiries(t, b, name) {
		w, id, exact, ok := periodOfKey(k, names)
		if ok && exact {
			exactly[w]++
		}
		switch {
		case !ok && boardLevelKey(k):
		case !ok && at == -1:
			bad = append(bad, k+": no expiry")
		case !ok:
		case want[w+":"+id] == 0:
			bad = append(bad, k+": a period never written")
		case at == -1, exact && at != want[w+":"+id], at > want[w+":"+id]:
			bad = append(bad, fmt.Sprintf("%s: expires %d, its period %d", k, at, want[w+":"+id]))
		}
	}
	slices.Sort(bad)
	require.Empty(t, bad)
	for _, w := range names {
		require.NotZero(t, exactly[w], "no key of a %s period found", w)
	}
}

// submitDay writes day d's submissions on board: n Submits WithID and
// WithData among pool members, a SubmitMany and a Batcher's submission.
func submitDay(t *testing.T, ctx context.Context, board *lb.Leaderboard, d, n, pool int) {
	t.Helper()
	for i := 0; i < n; i++ {
		m := fmt.Sprintf("m%d", (d*3+i)%pool)
		_, err := board.Submit(ctx, m, float64((d*7+i*13)%25-5), lb.WithID(fmt.Sprintf("id-%d-%d", d, i)), lb.WithData("n"+m))
		require.NoError(t, err)
	}
	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"x1": float64(d % 20), "x2": float64(20 - d%20)}))
	bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
	require.NoError(t, err)
	_, err = bt.Submit(ctx, "bat", float64(d%15))
	require.NoError(t, err)
	require.NoError(t, bt.Close(ctx))
}

// writeEveryKind runs one day of writes of every kind on board.
func writeEveryKind(t *testing.T, ctx context.Context, board *lb.Leaderboard, d int) {
	t.Helper()
	submitDay(t, ctx, board, d, 4, 11)
	var err error
	for _, w := range []lb.Window{lb.Daily(), lb.Weekly(), lb.Monthly()} {
		require.NoError(t, board.Set(ctx, "setm", float64(d%12), lb.In(w)))
		_, err = board.Top(ctx, 3, lb.In(w))
		require.NoError(t, err)
	}
	require.NoError(t, board.SetData(ctx, "x1", fmt.Sprint(d)))
	if d%4 == 1 {
		require.NoError(t, board.Remove(ctx, "m1"))
		_, err = board.RemoveBetween(ctx, 19, 19, lb.In(lb.Weekly()))
		require.NoError(t, err)
	}
	if d%6 == 2 {
		require.NoError(t, board.Reset(ctx, lb.In(lb.Monthly())))
		_, err := board.Submit(ctx, "after-reset", 3)
		require.NoError(t, err)
	}
}
