package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// keyExpiries lists every key of board name on b with its absolute
// expiry in unix ms (-1: none).
func keyExpiries(t *testing.T, b *testredis.Backend, name string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	c := b.Client.Client
	out := map[string]int64{}
	for _, pattern := range []string{"*{" + name + "}*", "*{" + name + "#*"} {
		for _, k := range b.Keys(t, pattern) {
			at, err := c.Do(ctx, c.B().Pexpiretime().Key(k).Build()).AsInt64()
			require.NoError(t, err, k)
			if at == -2 {
				continue // gone meanwhile
			}
			out[k] = at
		}
	}
	return out
}

// boardLevelKey reports whether key is one the documentation says lives
// for the board, not for a period: members' data (kept until SetData(""),
// Remove or Delete), Rebuild's markers.
func boardLevelKey(k string) bool {
	return strings.HasSuffix(k, ":data") || strings.HasSuffix(k, ":marker")
}

var expiryKinds = []struct {
	name string
	opts []lb.Option
}{
	{"plain", nil},
	{"plain-hot", []lb.Option{lb.WithHotTop(5)}},
	{"sharded", []lb.Option{lb.WithShards(0, 10)}},
	{"sharded-hot-shadow", []lb.Option{lb.WithShards(0, 10), lb.WithShadowShards(5), lb.WithHotTop(5)}},
}

// TestWindowedKeysExpire runs a windowed board (no all-time window)
// with WithRetention through many days of every kind of write, then lists
// every key it left: each must either be a board-level key the docs name
// (data, markers) or carry an expiry no later than the last period's end
// plus the retention (by the board's clock), so that nothing of a period
// outlives it. The board's clock runs two months ahead of Redis's, so no
// key has expired by Redis's clock yet: the expiries are read, not waited
// for.
func TestWindowedKeysExpire(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range expiryKinds {
			for _, stored := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/store=%v", kind.name, stored), func(t *testing.T) {
					runWindowedKeysExpire(t, b, kind.opts, stored)
				})
			}
		}
	})
}

func runWindowedKeysExpire(t *testing.T, b *testredis.Backend, kind []lb.Option, stored bool) {
	ctx := context.Background()
	clock := future
	name := shardName(t, b)
	const retention = 48 * time.Hour
	opts := slices.Concat([]lb.Option{
		lb.WithWindows(lb.Daily(), lb.Weekly(), lb.Monthly()),
		lb.WithRetention(retention),
		lb.WithDedupeWindow(time.Hour),
		lb.WithClock(func() time.Time { return clock }),
	}, kind)
	if stored {
		opts = append(opts, lb.WithStore(newMemStore()))
	}
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	const days = 40
	for d := 0; d < days; d++ {
		submitDay(t, ctx, board, d, 6, 17)
		var err error
		require.NoError(t, board.Set(ctx, "setm", float64(d%12), lb.In(lb.Weekly())))
		_, err = board.Top(ctx, 3)
		require.NoError(t, err)
		_, err = board.Top(ctx, 3, lb.In(lb.Weekly()))
		require.NoError(t, err)
		_, err = board.Page(ctx, 2, 2, lb.In(lb.Monthly()), lb.IncludeData())
		require.NoError(t, err)
		_, err = board.Around(ctx, "x1", 2)
		require.NoError(t, err)
		if d%5 == 0 {
			require.NoError(t, board.Remove(ctx, "m1"))
			_, err = board.RemoveBetween(ctx, 19, 19)
			require.NoError(t, err)
		}
		if d%9 == 0 {
			require.NoError(t, board.Reset(ctx, lb.In(lb.Weekly())))
		}
		if d%10 == 0 {
			// Check's repair writes on a sharded board; an unsharded
			// one has nothing to check (ErrInvalidArgument).
			if _, err := board.Check(ctx, true); !errors.Is(err, lb.ErrInvalidArgument) {
				require.NoError(t, err)
			}
		}
		if stored && d%13 == 0 {
			_, err := board.Rebuild(ctx)
			require.NoError(t, err)
			_, err = board.Seal(ctx, nil)
			require.NoError(t, err)
		}
		clock = clock.Add(24 * time.Hour)
	}
	// Latest allowed expiry: the last month's end plus the retention.
	limit := time.Date(clock.Year(), clock.Month()+1, 1, 0, 0, 0, 0, time.UTC).Add(retention).UnixMilli()
	// The oldest period written was on day 0: its keys must expire by its
	// end plus retention; look for any key at all that would outlive the
	// limit, and any without expiry.
	var noTTL, tooLate []string
	for k, at := range keyExpiries(t, b, name) {
		switch {
		case boardLevelKey(k):
		case at == -1:
			noTTL = append(noTTL, k)
		case at > limit:
			tooLate = append(tooLate, fmt.Sprintf("%s (expires %v)", k, time.UnixMilli(at).UTC()))
		}
	}
	slices.Sort(noTTL)
	slices.Sort(tooLate)
	if len(noTTL) > 20 {
		noTTL = append(noTTL[:20], fmt.Sprintf("... %d in all", len(noTTL)))
	}
	require.Empty(t, noTTL, "keys of a windowed board with no expiry")
	require.Empty(t, tooLate, "keys expiring after %v", time.UnixMilli(limit).UTC())
}
