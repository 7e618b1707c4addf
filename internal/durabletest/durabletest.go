// Package durabletest holds the fault tests a leaderboard.Store must pass,
// shared by the root package (with a store in memory) and pgstore (with
// PostgreSQL).
package durabletest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// KillAndRebuild runs a concurrent submit load against a redis-server of its
// own, kills it (SIGKILL) in the middle, starts it again empty, and rebuilds
// the board from store: every submission that returned without error, and
// every one that returned ErrPending (durable, not yet in Redis), must be
// there with its exact score, and Verify must find no difference. The
// client's connection is dialled again after the load stops, before the
// rebuild (testredis.OneConn).
func KillAndRebuild(t *testing.T, store lb.Store, board string, opts ...lb.Option) {
	server := startServer(t)
	client := testredis.NewOneConn(t, rueidis.ClientOption{InitAddress: []string{server.addr}, DisableCache: true})
	opts = append([]lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily())}, opts...)
	b, err := lb.New(client, board, append(opts, lb.WithStore(store))...)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = b.Rebuild(ctx)
	require.NoError(t, err)

	load := startLoad(t, b)
	time.Sleep(300 * time.Millisecond)
	server.kill()
	time.Sleep(100 * time.Millisecond)
	server.start() // empty: no persistence
	time.Sleep(200 * time.Millisecond)
	want := load.stop()
	client.Redial(t)
	requireRebuilt(t, b, want)
}

// server is a redis-server of the test's own, on a port it picked.
type server struct {
	t    *testing.T
	bin  string
	addr string
	port int
	cmd  *exec.Cmd
}

// startServer starts a redis-server without persistence, stopped when the
// test ends; without one on PATH the test skips (fails under CI=true).
func startServer(t *testing.T) *server {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if testredis.InCI() {
			t.Fatal("redis-server is required under CI=true")
		}
		t.Skip("no redis-server on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &server{t: t, bin: bin, addr: l.Addr().String(), port: l.Addr().(*net.TCPAddr).Port}
	require.NoError(t, l.Close())
	s.start()
	t.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
	return s
}

// start starts the server, empty, and waits until it answers.
func (s *server) start() {
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", s.t.TempDir())
	testredis.DieWithTest(s.cmd)
	require.NoError(s.t, s.cmd.Start())
	require.Eventually(s.t, func() bool {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.addr}, DisableCache: true})
		if err != nil {
			return false
		}
		defer c.Close()
		return c.Do(context.Background(), c.B().Ping().Build()).Error() == nil
	}, 5*time.Second, 20*time.Millisecond)
}

// kill kills the server with SIGKILL: what it held is gone.
func (s *server) kill() {
	require.NoError(s.t, s.cmd.Process.Signal(syscall.SIGKILL))
	_ = s.cmd.Wait()
}

// load is 8 writers submitting Accumulate scores with ids until stopped.
type load struct {
	t    *testing.T
	mu   sync.Mutex
	want map[string]float64 // every submission that returned nil or ErrPending
	// acked and pending count those that returned nil and ErrPending.
	acked, pending int
	done           chan struct{}
	wg             sync.WaitGroup
}

// startLoad starts the writers on b.
func startLoad(t *testing.T, b *lb.Leaderboard) *load {
	l := &load{t: t, want: map[string]float64{}, done: make(chan struct{})}
	for w := 0; w < 8; w++ {
		l.wg.Add(1)
		go l.write(b, w)
	}
	return l
}

// write submits until the load stops, or a submission fails otherwise
// than with ErrPending.
func (l *load) write(b *lb.Leaderboard, w int) {
	defer l.wg.Done()
	for i := 0; ; i++ {
		select {
		case <-l.done:
			return
		default:
		}
		m, v := fmt.Sprintf("p%d", (w*31+i)%40), float64(1+i%5)
		_, err := b.Submit(context.Background(), m, v, lb.WithID(fmt.Sprintf("%d-%d", w, i)))
		l.mu.Lock()
		switch {
		case err == nil:
			l.acked++
			l.want[m] += v
		case errors.Is(err, lb.ErrPending):
			l.pending++
			l.want[m] += v
		default:
			l.t.Errorf("submit: %v", err)
		}
		l.mu.Unlock()
		if err != nil && !errors.Is(err, lb.ErrPending) {
			return
		}
	}
}

// stop stops the writers and returns what they submitted.
func (l *load) stop() map[string]float64 {
	close(l.done)
	l.wg.Wait()
	require.Positive(l.t, l.acked)
	l.t.Logf("acknowledged %d, pending %d", l.acked, l.pending)
	return l.want
}

// requireRebuilt checks that Redis lost the board, rebuilds it, and
// requires every window to hold want and Verify to find it clean.
func requireRebuilt(t *testing.T, b *lb.Leaderboard, want map[string]float64) {
	ctx := context.Background()
	present, err := b.Present(ctx)
	require.NoError(t, err)
	require.False(t, present, "the restart must show")
	_, err = b.Rebuild(ctx)
	require.NoError(t, err)
	present, err = b.Present(ctx)
	require.NoError(t, err)
	require.True(t, present)

	for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
		top, err := b.Top(ctx, 1000, lb.In(w))
		require.NoError(t, err)
		require.Len(t, top, len(want), w.Name())
		for _, e := range top {
			require.Equal(t, want[e.Member], e.Score, "%s %s", w.Name(), e.Member)
		}
	}
	reports, err := b.Verify(ctx)
	require.NoError(t, err)
	for _, r := range reports {
		require.True(t, r.Clean(), "%+v", r)
	}
}
