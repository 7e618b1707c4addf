package leaderboard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// replyHookClient runs hook once, after the first call whose replies
// name the member trigger (or, with command set, that sent that command):
// a write landing right after a read that returned that member, before
// the caller's next round trip.
type replyHookClient struct {
	rueidis.Client
	mu      sync.Mutex
	trigger string
	command string
	hook    func()
}

func (c *replyHookClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	sent := c.sends(cmd)
	r := c.Client.Do(ctx, cmd)
	c.after(sent, []rueidis.RedisResult{r})
	return r
}

func (c *replyHookClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	sent := c.sends(cmds...)
	res := c.Client.DoMulti(ctx, cmds...)
	c.after(sent, res)
	return res
}

// sends reports whether cmds hold the command the hook waits for (read
// before they are sent: rueidis recycles a command once sent).
func (c *replyHookClient) sends(cmds ...rueidis.Completed) bool {
	for i := range cmds {
		if c.command != "" && strings.EqualFold(cmds[i].Commands()[0], c.command) {
			return true
		}
	}
	return false
}

func (c *replyHookClient) after(sent bool, res []rueidis.RedisResult) {
	c.mu.Lock()
	hook := c.hook
	if hook != nil {
		named := sent
		for i := range res {
			named = named || c.trigger != "" && strings.Contains(res[i].String(), `"`+c.trigger+`"`)
		}
		if !named {
			hook = nil
		} else {
			c.hook = nil
		}
	}
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// TestSealReadsAgainAfterARemoveOnARead page: Seal reads a closed period
// page by page and must seal it whole. A Remove of a member of a page
// already read (a cheater taken out after the period ended) shifts every
// later page up by one: the member that was first past the page was left
// out, and the removed member kept, with the count and no member twice
// agreeing, so Seal sealed those torn standings for good (the cheater
// rewarded, an honest player missing). Each page now starts with the last
// entry of the page before, which must be where it was: else the period
// is read again. On plain and sharded boards.
func TestSealReadsAgainAfterARemoveOnAReadPage(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {500}} {
			t.Run(fmt.Sprintf("shards=%v", shards), func(t *testing.T) {
				sealTornByRemove(t, b, shards)
			})
		}
	})
}

// sealSetup is a rebuilt daily board with a store (sharded by shards)
// read through hooked, an admin board of the same options on b's own
// client, and the clock an hour before the end of the period day.
type sealSetup struct {
	board, admin *lb.Leaderboard
	clock        *testClock
	day          lb.Period
	name         string
}

func newSealSetup(t *testing.T, b *testredis.Backend, shards []float64, hooked *replyHookClient) sealSetup {
	day := lb.Daily().Period(future.Add(-24 * time.Hour))
	s := sealSetup{clock: &testClock{now: day.End.Add(-time.Hour)}, day: day}
	s.name = shardName(t, b)
	opts := []lb.Option{lb.WithStore(newMemStore()), lb.WithWindows(lb.Daily()), lb.WithClock(s.clock.Now),
		lb.WithShards(shards...)}
	hooked.Client = b.Client
	var err error
	s.board, err = lb.New(hooked, s.name, opts...)
	require.NoError(t, err)
	s.admin, err = lb.New(b.Client, s.name, opts...)
	require.NoError(t, err)
	_, err = s.board.Rebuild(context.Background())
	require.NoError(t, err)
	return s
}

func sealTornByRemove(t *testing.T, b *testredis.Backend, shards []float64) {
	ctx := context.Background()
	hooked := &replyHookClient{trigger: "m0001"} // the last of the first page
	s := newSealSetup(t, b, shards, hooked)
	board, admin, clock, day := s.board, s.admin, s.clock, s.day
	scores := map[string]float64{"cheat": 5000}
	var want []lb.Entry
	for i := lb.MaxN - 1; i >= 0; i-- {
		m := fmt.Sprintf("m%04d", i)
		scores[m] = float64(i)
		want = append(want, lb.Entry{Member: m, Score: float64(i), Rank: int64(len(want) + 1)})
	}
	require.NoError(t, board.SubmitMany(ctx, scores)) // MaxN+1 members: two pages
	clock.Set(day.End.Add(time.Second))

	hooked.mu.Lock()
	hooked.hook = func() { require.NoError(t, admin.Remove(ctx, "cheat")) }
	hooked.mu.Unlock()
	sealed, err := board.Seal(ctx, nil)
	require.NoError(t, err)
	hooked.mu.Lock()
	require.Nil(t, hooked.hook, "the Remove ran after the first page")
	hooked.mu.Unlock()
	require.Len(t, sealed, 1)
	got := sealed[0].Entries
	if !slices.Equal(want, got) {
		t.Fatalf("sealed %d entries, first %+v, last %+v; want the %d after the Remove, first %+v, last %+v",
			len(got), got[0], got[len(got)-1], len(want), want[0], want[len(want)-1])
	}
}

// TestSealChecksPresentAfterItReads: sealing is for good, so Seal seals
// only what Redis holds as last rebuilt (Present). It checked that once,
// before it read: a wipe (a restart without persistence, a failover to an
// empty replica, a Cluster node lost) landing after that check and
// before the reads, followed by a replay into the closed period (a
// submission WithTime), left Redis holding one member of the period, and
// Seal sealed that one for good, the others' standings lost. Seal now
// checks again after it has read a period, before it seals it: the wipe
// shows (ErrNotPresent) and nothing is sealed; after a Rebuild, Seal seals
// the whole period. On plain and sharded boards.
func TestSealChecksPresentAfterItReads(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {5}} {
			t.Run(fmt.Sprintf("shards=%v", shards), func(t *testing.T) {
				sealAfterWipe(t, b, shards)
			})
		}
	})
}

func sealAfterWipe(t *testing.T, b *testredis.Backend, shards []float64) {
	ctx := context.Background()
	hooked := &replyHookClient{command: "EXISTS"} // Present's
	s := newSealSetup(t, b, shards, hooked)
	board, admin, clock, day := s.board, s.admin, s.clock, s.day
	scores := map[string]float64{}
	var want []lb.Entry
	for i := 9; i >= 0; i-- {
		m := fmt.Sprintf("m%d", i)
		scores[m] = float64(i)
		want = append(want, lb.Entry{Member: m, Score: float64(i), Rank: int64(len(want) + 1)})
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	clock.Set(day.End.Add(time.Second))

	hooked.mu.Lock()
	hooked.hook = func() { // after Seal's first Present
		for _, k := range allKeys(t, b, s.name) {
			require.NoError(t, b.Client.Do(ctx, b.Client.B().Del().Key(k).Build()).Error())
		}
		_, err := admin.Submit(ctx, "m3", 3, lb.WithTime(day.End.Add(-time.Minute)))
		require.NoError(t, err, "a replay into the closed period")
	}
	hooked.mu.Unlock()
	sealed, err := board.Seal(ctx, nil)
	require.ErrorIs(t, err, lb.ErrNotPresent, "sealed %v", sealed)
	require.Empty(t, sealed)
	_, ok, err := board.Sealed(ctx, lb.In(lb.Daily()), lb.At(day.Start))
	require.NoError(t, err)
	require.False(t, ok, "nothing sealed from the wiped board")

	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	sealed, err = board.Seal(ctx, nil)
	require.NoError(t, err)
	require.Len(t, sealed, 1)
	require.Equal(t, want, sealed[0].Entries, "the whole period, from the store")
}
