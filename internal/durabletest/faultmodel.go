package durabletest

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// FaultModel runs Submits (with and without WithID), Sets, Removes,
// RemoveBetweens, Resets and Deletes one after another on a board on store, on
// every policy, unsharded, sharded and tie-broken, through a client that fails one
// call in seven (half of them after sending it: the reply lost). Every
// failure must be ErrPending, and every write that returned nil or
// ErrPending durable: after a Rebuild the board equals a model of those
// writes in both windows (AllTime, Daily), and Verify is clean. store
// gives each board its store (one store may serve them all).
func FaultModel(t *testing.T, b *testredis.Backend, store func() lb.Store) {
	now := time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: now.Add(-time.Hour), Resolution: time.Millisecond, MaxScore: 1e5})
	require.NoError(t, err)
	kinds := map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(30, 60)}, "tie-break": {lb.WithTieBreak(tb)}}
	for _, policy := range []lb.Policy{lb.Accumulate, lb.Replace, lb.KeepBest} {
		for kind, opts := range kinds {
			t.Run(fmt.Sprint(policy, ",", kind), func(t *testing.T) {
				faultModelRun(t, b, store(), policy, now, opts)
			})
		}
	}
}

// faultModel is what a board should hold, by window.
type faultModel struct {
	policy     lb.Policy
	all, daily map[string]float64
	pending    int // writes that returned ErrPending
}

func (m *faultModel) submit(member string, score float64) {
	for _, w := range []map[string]float64{m.all, m.daily} {
		old, ok := w[member]
		switch {
		case !ok || m.policy == lb.Replace:
			w[member] = score
		case m.policy == lb.Accumulate:
			w[member] = old + score
		default:
			w[member] = max(old, score)
		}
	}
}

// durable requires err to be nil or ErrPending, and counts the latter.
func (m *faultModel) durable(t *testing.T, op string, err error) {
	t.Helper()
	if err != nil {
		require.ErrorIs(t, err, lb.ErrPending, op)
		m.pending++
	}
}

// faultModelRun runs the writes on one board, its clock a millisecond
// later at each.
func faultModelRun(t *testing.T, b *testredis.Backend, store lb.Store, policy lb.Policy, now time.Time, extra []lb.Option) {
	ctx := context.Background()
	fc := &flakyClient{Client: b.Client, r: rand.New(rand.NewSource(int64(policy) + 10))}
	name := b.BoardName(t)
	opts := append([]lb.Option{lb.WithPolicy(policy), lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithStore(store), lb.WithClock(func() time.Time { return now })}, extra...)
	board, err := lb.New(fc, name, opts...)
	require.NoError(t, err)
	m := &faultModel{policy: policy, all: map[string]float64{}, daily: map[string]float64{}}
	r := rand.New(rand.NewSource(int64(policy)))
	for i := range 300 {
		member, score := fmt.Sprintf("m%d", r.Intn(12)), float64(r.Intn(100))
		fc.on(true)
		m.step(t, ctx, board, fc, r.Intn(21), i, member, score)
		now = now.Add(time.Millisecond)
	}
	fc.on(false)
	require.Positive(t, m.pending, "faults reached the writes")
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	require.Equal(t, m.all, entries(t, board, lb.AllTime()), "alltime")
	require.Equal(t, m.daily, entries(t, board, lb.Daily()), "daily")
	reps, err := board.Verify(ctx)
	require.NoError(t, err)
	for _, r := range reps {
		require.True(t, r.Clean(), "%+v", r)
	}
}

// step runs write k of the mix (i numbers it) and files it in the model.
func (m *faultModel) step(t *testing.T, ctx context.Context, board *lb.Leaderboard, fc *flakyClient, k, i int, member string, score float64) {
	switch {
	case k < 9:
		_, err := board.Submit(ctx, member, score)
		m.durable(t, "submit", err)
		m.submit(member, score)
	case k < 14:
		var err error
		for range 50 {
			if _, err = board.Submit(ctx, member, score, lb.WithID(fmt.Sprint("id", i))); err == nil {
				break
			}
			require.ErrorIs(t, err, lb.ErrPending)
		}
		require.NoError(t, err, "applied within 50 tries")
		m.submit(member, score)
	case k < 16:
		m.durable(t, "set", board.Set(ctx, member, score))
		m.all[member] = score
	case k < 18:
		m.durable(t, "remove", board.Remove(ctx, member))
		delete(m.all, member)
		delete(m.daily, member)
	case k < 19:
		// It removes what Redis holds in the range (not a submission
		// still pending), or nothing when it failed before the store
		// recorded the removal (an error that is not ErrPending).
		fc.on(false)
		lo, hi := score, score+20
		inRedis := entries(t, board, lb.AllTime())
		fc.on(true)
		_, err := board.RemoveBetween(ctx, lo, hi)
		if err != nil && !errors.Is(err, lb.ErrPending) {
			return
		}
		m.durable(t, "remove between", err)
		for mem, v := range inRedis {
			if v >= lo && v <= hi {
				delete(m.all, mem)
			}
		}
	case k < 20:
		m.durable(t, "reset", board.Reset(ctx, lb.In(lb.Daily())))
		clear(m.daily)
	default:
		m.durable(t, "delete", board.Delete(ctx))
		clear(m.all)
		clear(m.daily)
	}
}

// entries reads every entry of window w's current period.
func entries(t *testing.T, board *lb.Leaderboard, w lb.Window) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for e, err := range board.All(context.Background(), lb.In(w)) {
		require.NoError(t, err)
		out[e.Member] = e.Score
	}
	return out
}

// errFlaky is flakyClient's failure.
var errFlaky = errors.New("injected redis failure")

// flakyClient fails one call in seven while on, half of them after
// sending it (the reply lost).
type flakyClient struct {
	rueidis.Client
	mu      sync.Mutex
	r       *rand.Rand
	enabled bool
}

func (c *flakyClient) on(enabled bool) {
	c.mu.Lock()
	c.enabled = enabled
	c.mu.Unlock()
}

func (c *flakyClient) trip() (fail, lost bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.enabled && c.r.Intn(7) == 0, c.r.Intn(2) == 0
}

func (c *flakyClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	fail, lost := c.trip()
	if !fail || lost {
		r := c.Client.Do(ctx, cmd)
		if !fail {
			return r
		}
	}
	return rueidis.NewErrorResult(errFlaky)
}

func (c *flakyClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	fail, lost := c.trip()
	if !fail || lost {
		rs := c.Client.DoMulti(ctx, multi...)
		if !fail {
			return rs
		}
	}
	out := make([]rueidis.RedisResult, len(multi))
	for i := range out {
		out[i] = rueidis.NewErrorResult(errFlaky)
	}
	return out
}
