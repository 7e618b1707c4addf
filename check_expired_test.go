package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestCheckAtAnExpiredPeriod: Check At a period past its retention
// returns ErrExpired, as a read At it does, without a call to Redis (with
// repair too, which would otherwise write into keys Redis is expiring);
// a window whose period there is still kept is checked as before.
func TestCheckAtAnExpiredPeriod(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	clock := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	b.Mini.SetTime(clock)
	board, _ := newBoard(t, b, lb.WithShards(100), lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithRetention(6*time.Hour), lb.WithClock(func() time.Time { return clock }))
	for m, v := range map[string]float64{"low": 10, "high": 200} {
		_, err := board.Submit(ctx, m, v)
		require.NoError(t, err)
	}
	day := lb.At(clock)

	clock = clock.Add(7 * time.Hour) // closed, still kept
	b.Mini.FastForward(7 * time.Hour)
	reports, err := board.Check(ctx, false, day)
	require.NoError(t, err)
	require.Len(t, reports, 2)
	for _, r := range reports {
		require.Equal(t, int64(2), r.Members, r.Window)
		require.True(t, r.Clean(), r.Window)
	}

	clock = clock.Add(time.Hour + time.Millisecond) // past the daily period's retention
	b.Mini.FastForward(time.Hour + time.Millisecond)
	calls := b.Client.Calls()
	for _, repair := range []bool{false, true} {
		_, err = board.Check(ctx, repair, day)
		require.ErrorIs(t, err, lb.ErrExpired, "repair %v", repair)
		_, err = board.Check(ctx, repair, day, lb.In(lb.Daily()))
		require.ErrorIs(t, err, lb.ErrExpired, "repair %v, In(Daily)", repair)
	}
	require.Equal(t, calls, b.Client.Calls(), "an expired period is decided without Redis")

	reports, err = board.Check(ctx, false, day, lb.In(lb.AllTime()))
	require.NoError(t, err, "the all-time period is never past its retention")
	require.Len(t, reports, 1)
	require.Equal(t, int64(2), reports[0].Members)
}

// expiringClient runs expire once, before the first call it sends after
// it is armed: a period's retention ends just as a scan of it starts.
type expiringClient struct {
	rueidis.Client
	expire func()
}

func (c *expiringClient) fire() {
	if f := c.expire; f != nil {
		c.expire = nil
		f()
	}
}

func (c *expiringClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.fire()
	return c.Client.Do(ctx, cmd)
}

func (c *expiringClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.fire()
	return c.Client.DoMulti(ctx, cmds...)
}

// TestCheckPeriodExpiringAsChecked: Check At a period whose retention
// ended as it scanned it (Redis expiring its shards and partitions part
// way) reported the members it lost sight of as missing or stray, on a
// sound board; it returns ErrExpired, as for a period past its retention
// when Check starts.
func TestCheckPeriodExpiringAsChecked(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		yesterday := lb.Daily().Period(future.Add(-24 * time.Hour))
		clock := &testClock{now: yesterday.End.Add(23*time.Hour + 59*time.Minute)}
		name := shardName(t, b)
		client := &expiringClient{Client: b.Client}
		board, err := lb.New(client, name, lb.WithShards(0, 10), lb.WithWindows(lb.Daily()), lb.WithClock(clock.Now))
		require.NoError(t, err)
		for m, v := range map[string]float64{"low": -5, "mid": 5, "high": 50} {
			_, err := board.Submit(ctx, m, v, lb.WithTime(yesterday.Start.Add(time.Hour)))
			require.NoError(t, err)
		}
		reports, err := board.Check(ctx, false, lb.At(yesterday.Start))
		require.NoError(t, err)
		require.Len(t, reports, 1)
		require.True(t, reports[0].Clean(), "%+v", reports[0])

		for _, repair := range []bool{false, true} {
			client.expire = func() {
				clock.Set(yesterday.End.Add(24 * time.Hour))
				for _, k := range b.Keys(t, "*{"+name+"#s*:daily:"+yesterday.ID) {
					require.NoError(t, b.Client.Do(ctx, b.Client.B().Del().Key(k).Build()).Error())
				}
			}
			reports, err = board.Check(ctx, repair, lb.At(yesterday.Start))
			require.ErrorIs(t, err, lb.ErrExpired, "repair %v: %+v", repair, reports)
			clock.Set(yesterday.End.Add(23*time.Hour + 59*time.Minute))
		}
	})
}
