package leaderboard_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// Tests of the rule that an I/O method whose ctx ended before or during
// the call returns an error matching ctx's (errors.Is(err, ctx.Err())),
// whichever way rueidis, the network or a store report the cut.

// stallDialer dials a backend for a client of its own, and can stall:
// it stands for a server that stopped answering after the client's
// connections were lost. A stalled dial waits until its ctx's deadline
// passes and then fails as the net package fails a connect whose deadline
// (the ctx's, set on the socket) fires before the ctx's own timer closed
// Done: "dial tcp ...: i/o timeout", an os.ErrDeadlineExceeded that does
// not match context.DeadlineExceeded, which rueidis returns as it is while
// ctx.Err() is still nil. A stalled dial whose ctx has ended fails as net
// fails it then (its errors match the ctx's); one whose ctx cannot end,
// or ends later than stallRefused, is refused after stallRefused.
type stallDialer struct {
	mu      sync.Mutex
	stalled chan struct{} // closed when the stall ends; nil: not stalled
	conns   []net.Conn
	dials   map[string]int // stalled dials, per address
}

// stallClient is a client of b's server whose dials s controls. It keeps
// one connection a node (PipelineMultiplex -1), so that a ping shows
// that the client has given up its connection.
func stallClient(t *testing.T, b *testredis.Backend) (rueidis.Client, *stallDialer) {
	t.Helper()
	var opt rueidis.ClientOption
	switch b.Name {
	case "miniredis":
		opt = rueidis.ClientOption{InitAddress: []string{b.Mini.Addr()}, ForceSingleClient: true}
	case "redis":
		var err error
		opt, err = redisurl.Parse(testredis.URL())
		require.NoError(t, err)
	default:
		opt = rueidis.ClientOption{InitAddress: testredis.ClusterAddrs()}
	}
	s := &stallDialer{dials: map[string]int{}}
	opt.DisableCache, opt.PipelineMultiplex, opt.DialCtxFn = true, -1, s.dial
	c, err := rueidis.NewClient(opt)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.resume()
		c.Close()
	})
	return c, s
}

func (s *stallDialer) dial(ctx context.Context, dst string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
	s.mu.Lock()
	stalled := s.stalled
	if stalled != nil {
		s.dials[dst]++
	}
	s.mu.Unlock()
	if stalled != nil {
		if err := stalledDial(ctx, dst, stalled); err != nil {
			return nil, err
		}
	}
	conn, err := d.DialContext(ctx, "tcp", dst)
	if err == nil {
		s.mu.Lock()
		s.conns = append(s.conns, conn)
		s.mu.Unlock()
	}
	return conn, err
}

// stallRefused is how long a stalled dial whose ctx cannot end (a
// Batcher's write, a clean-up sent WithoutCancel), or ends later than
// that (a Cluster client's refresh, which callers wait for), waits before
// it is refused: long enough for a Flush or a Close to wait on a batch,
// and short enough for the test to run in seconds.
const stallRefused = 500 * time.Millisecond

// stalledDial waits as a dial to a server that does not answer waits, and
// returns its error, or nil for the dial to go on (its ctx ended, or the
// stall did).
func stalledDial(ctx context.Context, dst string, stalled chan struct{}) error {
	dl, ok := ctx.Deadline()
	if !ok && ctx.Done() == nil || ok && time.Until(dl) > stallRefused {
		select {
		case <-time.After(stallRefused):
			return &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		case <-stalled:
			return nil
		}
	}
	var timeout <-chan time.Time
	if ok {
		timer := time.NewTimer(time.Until(dl))
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case <-timeout:
		if ctx.Err() != nil {
			return nil
		}
		addr, err := net.ResolveTCPAddr("tcp", dst)
		if err != nil {
			return err
		}
		return &net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: os.ErrDeadlineExceeded}
	case <-ctx.Done():
	case <-stalled:
	}
	return nil
}

// lateCtx is a ctx whose deadline passes lag before its timer fires (Done
// closes, Err reports it): the window in which a socket's deadline, set
// from the ctx's, fires first, widened so that tests meet it every time.
type lateCtx struct {
	context.Context
	dl time.Time
}

func (c lateCtx) Deadline() (time.Time, bool) { return c.dl, true }

// withLateDeadline is ctx with deadline dl and a timer lag late.
func withLateDeadline(ctx context.Context, dl time.Time, lag time.Duration) (context.Context, context.CancelFunc) {
	inner, cancel := context.WithDeadline(ctx, dl.Add(lag))
	return lateCtx{inner, dl}, cancel
}

// stall closes c's connections and stalls its dials; it returns once
// every node's client has redialed (a ping on an old connection would
// fail at once with no ctx in sight).
func (s *stallDialer) stall(t *testing.T, c rueidis.Client) {
	t.Helper()
	s.mu.Lock()
	s.stalled = make(chan struct{})
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, conn := range conns {
		_ = conn.Close()
	}
	for addr, node := range c.Nodes() {
		require.Eventually(t, func() bool {
			s.mu.Lock()
			before := s.dials[addr]
			s.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			defer cancel()
			_ = node.Do(ctx, node.B().Ping().Build()).Error()
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.dials[addr] > before
		}, 10*time.Second, time.Millisecond, "the client of %s never redialed", addr)
	}
}

// resume lets dials through again.
func (s *stallDialer) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled != nil {
		close(s.stalled)
		s.stalled = nil
	}
}

// ctxCall is one exported I/O method. op is what its error names; write
// marks a call that must write nothing when its ctx had ended; local a
// call that may be answered without Redis (from a hot top's snapshot, a
// store), which a stalled Redis need not cut short.
type ctxCall struct {
	name, op     string
	write, local bool
	call         func(ctx context.Context) error
}

// ctxCalls are the board's exported I/O methods, each with good input.
func ctxCalls(board *lb.Leaderboard, sharded bool) []ctxCall {
	e1 := func(f func(context.Context) (any, error)) func(context.Context) error {
		return func(ctx context.Context) error { _, err := f(ctx); return err }
	}
	cs := []ctxCall{
		{"Submit", "submit", true, false, e1(func(ctx context.Context) (any, error) { return board.Submit(ctx, "new", 5, lb.WithData("d")) })},
		{"Submit WithID", "submit", true, false, e1(func(ctx context.Context) (any, error) { return board.Submit(ctx, "new", 5, lb.WithID("x")) })},
		{"SubmitMany", "submit many", true, false, func(ctx context.Context) error { return board.SubmitMany(ctx, map[string]float64{"new": 5, "m1": 9}) }},
		{"Set", "set", true, false, func(ctx context.Context) error { return board.Set(ctx, "m1", 50) }},
		{"SetData", "set data", true, false, func(ctx context.Context) error { return board.SetData(ctx, "m1", "x") }},
		{"Remove", "remove", true, false, func(ctx context.Context) error { return board.Remove(ctx, "m2") }},
		{"RemoveBetween", "remove between", true, false, e1(func(ctx context.Context) (any, error) { return board.RemoveBetween(ctx, 0, 3) })},
		{"Reset", "reset", true, false, func(ctx context.Context) error { return board.Reset(ctx) }},
		{"Delete", "delete", true, false, func(ctx context.Context) error { return board.Delete(ctx) }},
		{"Rebuild", "rebuild", true, false, e1(func(ctx context.Context) (any, error) { return board.Rebuild(ctx) })},
		{"Seal", "seal", true, false, e1(func(ctx context.Context) (any, error) { return board.Seal(ctx, nil) })},
		{"Top", "top", false, true, e1(func(ctx context.Context) (any, error) { return board.Top(ctx, 3) })},
		{"Rank", "rank", false, false, e1(func(ctx context.Context) (any, error) { return board.Rank(ctx, "m1") })},
		{"Ranks", "ranks", false, false, e1(func(ctx context.Context) (any, error) { return board.Ranks(ctx, []string{"m1", "m3"}) })},
		{"Around", "around", false, false, e1(func(ctx context.Context) (any, error) { return board.Around(ctx, "m3", 1) })},
		{"AroundScore", "around score", false, false, e1(func(ctx context.Context) (any, error) {
			_, es, err := board.AroundScore(ctx, 4, 1)
			return es, err
		})},
		{"Page", "page", false, false, e1(func(ctx context.Context) (any, error) { return board.Page(ctx, 1, 2) })},
		{"Range", "range", false, false, e1(func(ctx context.Context) (any, error) { return board.Range(ctx, 1, 3) })},
		{"Between", "between", false, false, e1(func(ctx context.Context) (any, error) { return board.Between(ctx, 0, 100, 5) })},
		{"CountBetween", "count between", false, false, e1(func(ctx context.Context) (any, error) { return board.CountBetween(ctx, 0, 100) })},
		{"Cutoff", "cutoff", false, false, e1(func(ctx context.Context) (any, error) { return board.Cutoff(ctx, 50) })},
		{"Among", "among", false, false, e1(func(ctx context.Context) (any, error) { return board.Among(ctx, []string{"m1", "m2"}) })},
		{"Count", "count", false, false, e1(func(ctx context.Context) (any, error) { return board.Count(ctx) })},
		{"All", "all", false, false, func(ctx context.Context) error {
			for _, err := range board.All(ctx) {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"Periods", "periods", false, false, e1(func(ctx context.Context) (any, error) { return board.Periods(ctx) })},
		{"Present", "present", false, false, e1(func(ctx context.Context) (any, error) { return board.Present(ctx) })},
		{"Verify", "verify", false, false, e1(func(ctx context.Context) (any, error) { return board.Verify(ctx) })},
		{"Sealed", "sealed", false, true, func(ctx context.Context) error { _, _, err := board.Sealed(ctx); return err }},
		{"ProposeBounds", "propose bounds", false, false, e1(func(ctx context.Context) (any, error) { return board.ProposeBounds(ctx, 2) })},
	}
	if sharded {
		cs = append(cs,
			ctxCall{"Check", "check", false, false, e1(func(ctx context.Context) (any, error) { return board.Check(ctx, false) })},
			ctxCall{"Check repair", "check", true, false, e1(func(ctx context.Context) (any, error) { return board.Check(ctx, true) })},
			ctxCall{"FillShadow", "fill shadow", true, false, e1(func(ctx context.Context) (any, error) { return board.FillShadow(ctx) })},
			ctxCall{"DropShadow", "drop shadow", true, false, func(ctx context.Context) error { return board.DropShadow(ctx) }})
	}
	return cs
}

// batcherCalls are a Batcher's: its Submit, then Flush and Close, which
// wait for that submission's batch.
func batcherCalls(bt *lb.Batcher) []ctxCall {
	return []ctxCall{
		{"Batcher.Submit", "batch", true, false, func(ctx context.Context) error { _, err := bt.Submit(ctx, "new", 5); return err }},
		// Local: with nothing pending (the Submit before them gave up at
		// its deadline, and its batch may be written, or have failed,
		// before theirs) they have nothing to wait for, and answer nil.
		{"Batcher.Flush", "batch", false, true, bt.Flush},
		{"Batcher.Close", "batch", false, true, bt.Close},
	}
}

// TestCtxEndedErrors: every exported I/O method, on a plain board with a
// hot top and on a sharded one moving to new bounds (both with a store),
// returns an error matching its ctx's when the ctx was cancelled or past
// its deadline before the call (then writing nothing, in Redis or the
// store), with connections up and with the client redialing; and when
// the deadline passes during the call, as the client redials a server
// that no longer answers. Before, a deadline that passed in rueidis's dial
// came back as the net package's "i/o timeout", which matches
// os.ErrDeadlineExceeded but not context.DeadlineExceeded, and a hot top
// or a store answered a ctx that had ended.
func TestCtxEndedErrors(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			t.Run(map[bool]string{false: "plain", true: "sharded"}[sharded], func(t *testing.T) {
				runCtxEnded(t, b, sharded)
			})
		}
	})
}

func runCtxEnded(t *testing.T, b *testredis.Backend, sharded bool) {
	ctx := context.Background()
	c, stall := stallClient(t, b)
	mem := newMemStore()
	opts := []lb.Option{lb.WithStore(mem), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future))}
	if sharded {
		opts = append(opts, lb.WithShards(0, 5), lb.WithShadowShards(3))
	} else {
		opts = append(opts, lb.WithHotTop(3))
	}
	name := shardName(t, b)
	board, err := lb.New(c, name, opts...)
	require.NoError(t, err)
	for i, m := range []string{"m1", "m2", "m3", "m4"} {
		_, err := board.Submit(ctx, m, float64(2*i+1), lb.WithData(m))
		require.NoError(t, err)
	}
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	_, err = board.Top(ctx, 3) // a hot top's snapshot, for the next Top
	require.NoError(t, err)
	before, rows := b.Snapshot(t, name), mem.rows()

	// Each way a ctx ends, with the error the call must match: cancelled,
	// past its deadline, and past its deadline with its timer yet to fire
	// (Err still nil), each before the call.
	type end struct {
		how  string
		want error
		ctx  func() (context.Context, context.CancelFunc)
	}
	ends := []end{
		{"cancelled before the call", context.Canceled, func() (context.Context, context.CancelFunc) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			return cctx, cancel
		}},
		{"deadline passed before the call", context.DeadlineExceeded, func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(ctx, time.Now().Add(-time.Second))
		}},
		{"deadline passed before the call, its timer late", context.DeadlineExceeded, func() (context.Context, context.CancelFunc) {
			return withLateDeadline(ctx, time.Now().Add(-time.Millisecond), 200*time.Millisecond)
		}},
	}
	ended := func(how string, e end) {
		bt, err := board.NewBatcher()
		require.NoError(t, err)
		for _, cc := range append(ctxCalls(board, sharded), batcherCalls(bt)...) {
			cctx, cancel := e.ctx()
			err := cc.call(cctx)
			cancel()
			requireCtxErr(t, e.want, err, cc, e.how+how)
			if cc.write {
				assert.Equal(t, before, b.Snapshot(t, name), "%s, %s%s: wrote to Redis", cc.name, e.how, how)
				assert.Equal(t, rows, mem.rows(), "%s, %s%s: wrote to the store", cc.name, e.how, how)
			}
		}
	}
	for _, e := range ends {
		ended("", e)
	}
	stall.stall(t, c)
	for _, e := range ends {
		ended(", redialing", e)
	}

	// The deadline passes during the call, as the client dials a server
	// that does not answer, before the ctx's timer fires.
	bt, err := board.NewBatcher()
	require.NoError(t, err)
	for _, cc := range append(ctxCalls(board, sharded), batcherCalls(bt)...) {
		cctx, cancel := withLateDeadline(ctx, time.Now().Add(20*time.Millisecond), 100*time.Millisecond)
		err := cc.call(cctx)
		cancel()
		if err == nil && cc.local {
			continue // answered without Redis, before the deadline
		}
		requireCtxErr(t, context.DeadlineExceeded, err, cc, "deadline passed during the call")
	}
}

// requireCtxErr fails t unless err matches want, the ctx's error, and
// names cc's operation.
func requireCtxErr(t *testing.T, want, err error, cc ctxCall, how string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s, %s: no error", cc.name, how)
	case !errors.Is(err, want):
		t.Errorf("%s, %s: %v does not match %v", cc.name, how, err, want)
	case !strings.Contains(err.Error(), cc.op):
		t.Errorf("%s, %s: %q does not name %q", cc.name, how, err, cc.op)
	}
}
