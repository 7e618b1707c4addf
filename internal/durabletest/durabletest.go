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
// there with its exact score, and Verify must find no difference.
func KillAndRebuild(t *testing.T, store lb.Store, board string, opts ...lb.Option) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if testredis.InCI() {
			t.Fatal("redis-server is required under CI=true")
		}
		t.Skip("no redis-server on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
			if err != nil {
				return false
			}
			defer c.Close()
			return c.Do(context.Background(), c.B().Ping().Build()).Error() == nil
		}, 5*time.Second, 20*time.Millisecond)
		return cmd
	}
	server := start()
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })

	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	require.NoError(t, err)
	t.Cleanup(client.Close)
	opts = append([]lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily())}, opts...)
	b, err := lb.New(client, board, append(opts, lb.WithStore(store))...)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = b.Rebuild(ctx)
	require.NoError(t, err)

	var mu sync.Mutex
	want := map[string]float64{} // every submission that returned nil or ErrPending
	acked, pending := 0, 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				m, v := fmt.Sprintf("p%d", (w*31+i)%40), float64(1+i%5)
				_, err := b.Submit(ctx, m, v, lb.WithID(fmt.Sprintf("%d-%d", w, i)))
				mu.Lock()
				switch {
				case err == nil:
					acked++
					want[m] += v
				case errors.Is(err, lb.ErrPending):
					pending++
					want[m] += v
				default:
					t.Errorf("submit: %v", err)
				}
				mu.Unlock()
				if err != nil && !errors.Is(err, lb.ErrPending) {
					return
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, server.Process.Signal(syscall.SIGKILL))
	_ = server.Wait()
	time.Sleep(100 * time.Millisecond)
	server = start() // empty: no persistence
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	require.Positive(t, acked)
	t.Logf("acknowledged %d, pending %d", acked, pending)

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
