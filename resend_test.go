package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestRefusedResent: a command Redis answers it did not run (LOADING,
// CLUSTERDOWN, TRYAGAIN: every command, a transaction's MULTI, queued
// commands and EXEC too) is sent again until Redis runs it, once, a write
// too; a command refused otherwise, or that may have run (the network),
// is not; and a refusal that lasts ends with the call's ctx. Miniredis
// refuses every command with the error it is given (SetError), which
// refusing lifts after a few refusals, as a slot migration ends.
func TestRefusedResent(t *testing.T) {
	for _, refusal := range []string{
		"LOADING Redis is loading the dataset in memory",
		"CLUSTERDOWN The cluster is down",
		"TRYAGAIN Multiple keys request during rehashing of slot",
	} {
		kind, _, _ := strings.Cut(refusal, " ")
		t.Run(kind, func(t *testing.T) {
			b := testredis.Mini(t)
			c := &refusing{Client: b.Client, mr: b.Mini}
			// Accumulate: a write applied twice would show in the totals.
			board, err := lb.New(c, b.BoardName(t), lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily()))
			require.NoError(t, err)
			// Before the board's keys are wiped (cleanups run last first).
			t.Cleanup(func() { b.Mini.SetError("") })
			ctx := t.Context()
			calls := []struct {
				name string
				call func() error
			}{
				{"Submit (a script)", func() error { _, err := board.Submit(ctx, "a", 2, lb.WithID("x")); return err }},
				{"Submit (a transaction)", func() error { _, err := board.Submit(ctx, "a", 3); return err }},
				{"SubmitMany", func() error { return board.SubmitMany(ctx, map[string]float64{"a": 5, "b": 7}) }},
				{"Rank (a transaction of reads)", func() error { _, err := board.Rank(ctx, "a"); return err }},
				{"Remove", func() error { return board.Remove(ctx, "b") }},
			}
			for _, tc := range calls {
				c.refuse(refusal, 3)
				require.NoError(t, tc.call(), tc.name)
				require.Equal(t, 3, c.sent(), "%s: refusals", tc.name)
			}
			want := []lb.Entry{{Member: "a", Score: 10, Rank: 1}}
			for _, q := range []lb.Query{lb.In(lb.AllTime()), lb.In(lb.Daily())} {
				got, err := board.Top(ctx, 10, q)
				require.NoError(t, err)
				require.Equal(t, want, got, "each write applied once")
			}

			// A refusal that lasts: the call ends with its ctx.
			ended, cancel := context.WithCancel(ctx)
			c.refuse(refusal, -1)
			c.onSend = func(n int) {
				if n == 5 {
					cancel()
				}
			}
			_, err = board.Submit(ended, "a", 1)
			require.ErrorIs(t, err, context.Canceled)
			require.Equal(t, 5, c.sent(), "sent again after its ctx ended")
			c.onSend = nil

			// Another error, or the network's: sent once.
			c.refuse("ERR something else", -1)
			_, err = board.Submit(ctx, "a", 1)
			require.ErrorContains(t, err, "something else")
			require.Equal(t, 1, c.sent(), "a write refused otherwise sent again")
			c.refuse("", 0)
			c.down = true
			_, err = board.Submit(ctx, "a", 1)
			require.ErrorIs(t, err, errNetwork)
			require.Equal(t, 1, c.sent(), "a write failed by the network sent again")
			c.down = false

			got, err := board.Top(ctx, 10)
			require.NoError(t, err)
			require.Equal(t, want, got, "a refused write applied")
		})
	}
}

var errNetwork = errors.New("connection reset by peer")

// refusing is a client whose miniredis refuses every command with an
// error (miniredis.SetError), and lifts it after a given number of sends;
// or, down, fails every command unsent, as the network does. It counts
// the sends of each.
type refusing struct {
	rueidis.Client
	mr     *miniredis.Miniredis
	mu     sync.Mutex
	left   int // sends still refused; < 0: for good
	sends  int
	down   bool
	onSend func(n int) // after each counted send
}

// refuse makes miniredis answer err to every command, for n sends (n < 0:
// for good; err "": none).
func (c *refusing) refuse(err string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sends, c.left = 0, n
	c.mr.SetError(err)
}

func (c *refusing) sent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sends
}

// after counts a send, and lifts the refusal after its last one.
func (c *refusing) after() {
	c.mu.Lock()
	if c.left == 0 && !c.down {
		c.mu.Unlock()
		return
	}
	c.sends++
	if c.left > 0 {
		if c.left--; c.left == 0 {
			c.mr.SetError("")
		}
	}
	n, f := c.sends, c.onSend
	c.mu.Unlock()
	if f != nil {
		f(n)
	}
}

func (c *refusing) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	defer c.after()
	if c.down {
		return rueidis.NewErrorResult(errNetwork)
	}
	return c.Client.Do(ctx, cmd)
}

func (c *refusing) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	defer c.after()
	if c.down {
		out := make([]rueidis.RedisResult, len(cmds))
		for i := range out {
			out[i] = rueidis.NewErrorResult(errNetwork)
		}
		return out
	}
	return c.Client.DoMulti(ctx, cmds...)
}

// emptyCalls counts the DoMulti calls of no command it is given.
type emptyCalls struct {
	rueidis.Client
	n atomic.Int64
}

func (c *emptyCalls) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if len(multi) == 0 {
		c.n.Add(1)
	}
	return c.Client.DoMulti(ctx, multi...)
}

// TestNoEmptyCallReachesTheClient: the board never hands the caller's
// client a DoMulti of no command. rueidis sends nothing for one, but a
// client that wraps rueidis's (a tracer, a metrics hook, a test's counter)
// would count a call Redis never saw. A Rebuild of ids and members, where
// a chunk of ids may leave nothing pending (flushIDs), a sharded board's
// Check with repair and a Rebuild of an empty board, on every kind of board and
// backend.
func TestNoEmptyCallReachesTheClient(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		c := &emptyCalls{Client: b.Client}
		store := newMemStore()
		opts := append([]lb.Option{lb.WithStore(store), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithHotTop(10)}, kind...)
		board, err := lb.New(c, shardName(t, b), opts...)
		require.NoError(t, err)
		empty, err := lb.New(c, shardName(t, b)+"e", opts...)
		require.NoError(t, err)
		for i := range 30 {
			_, err := board.Submit(ctx, fmt.Sprint("p", i), float64(i), lb.WithID(fmt.Sprint("id", i)))
			require.NoError(t, err)
		}
		_, err = board.Top(ctx, 10)
		require.NoError(t, err)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		if len(kind) > 0 { // Check reads a sharded board's layout
			_, err = board.Check(ctx, true)
			require.NoError(t, err)
		}
		_, err = empty.Rebuild(ctx)
		require.NoError(t, err)
		require.Zero(t, c.n.Load(), "empty DoMulti calls")
	})
}
