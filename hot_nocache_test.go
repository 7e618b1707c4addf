package leaderboard_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestHotTopWithoutCache: a board with WithHotTop on a client built with
// DisableCache (every backend's b.Client) reads its mirror through the
// cache once at most, its first read, and with a plain GET after: a cached
// read on such a client, redirected by ASK while its slot migrates, panics
// in rueidis's reader (TestHotTopWithoutCacheAsk). Top stays exact: the
// same as a board without WithHotTop reads from the period.
func TestHotTopWithoutCache(t *testing.T) { eachHotKind(t, runHotTopWithoutCache) }

func runHotTopWithoutCache(t *testing.T, b *testredis.Backend, kind []lb.Option) {
	ctx := context.Background()
	board, name := newHotBoard(t, b, kind, 10)
	plain, err := lb.New(b.Client, name, kind...)
	require.NoError(t, err)
	before := b.Client.CacheCalls()
	for i := range 30 {
		_, err := board.Submit(ctx, fmt.Sprintf("m%02d", i%23), float64(i*7%31))
		require.NoError(t, err)
		got, err := board.Top(ctx, 5)
		require.NoError(t, err)
		want, err := plain.Top(ctx, 5)
		require.NoError(t, err)
		require.Equal(t, want, got, "Top(5) after write %d", i)
	}
	require.LessOrEqual(t, b.Client.CacheCalls()-before, int64(1), "cached reads on a client without a cache")
}

// TestHotTopWithoutCacheAsk reads Top through a Cluster client built with
// DisableCache while the board's slot migrates, its mirror moved to the
// target and its period not (so the source answers the mirror's read with
// ASK): a cached read redirected by ASK panics in rueidis's reader on such
// a client (v1.0.79), which crashes the process. The Cluster is the test's
// own (startOwnCluster): a migration must not touch the shared one.
func TestHotTopWithoutCacheAsk(t *testing.T) {
	oc := startOwnCluster(t)
	ctx := context.Background()
	name := fmt.Sprintf("ask%d", time.Now().UnixNano())
	board, err := lb.New(oc.client, name, lb.WithHotTop(10))
	require.NoError(t, err)
	plain, err := lb.New(oc.client, name)
	require.NoError(t, err)
	for i := range 20 {
		_, err := board.Submit(ctx, fmt.Sprintf("m%02d", i), float64(i))
		require.NoError(t, err)
	}
	want, err := plain.Top(ctx, 5)
	require.NoError(t, err)
	got, err := board.Top(ctx, 5) // builds the mirror
	require.NoError(t, err)
	require.Equal(t, want, got)

	slot, mirror := mirrorOf(t, oc, name)
	src := oc.owner[slot]
	dst := (src + 1) % 3
	s := strconv.Itoa(int(slot))
	require.NoError(t, oc.admin(dst, "CLUSTER", "SETSLOT", s, "IMPORTING", oc.ids[src]))
	require.NoError(t, oc.admin(src, "CLUSTER", "SETSLOT", s, "MIGRATING", oc.ids[dst]))
	host, port, _ := net.SplitHostPort(oc.addrs[dst])
	require.NoError(t, oc.admin(src, "MIGRATE", host, port, "", "0", "5000", "KEYS", mirror))
	ask, err := oc.adminString(src, "GET", mirror)
	require.ErrorContains(t, err, "ASK", "the source's answer for the moved mirror (%q)", ask)

	for range 20 {
		got, err := board.Top(ctx, 5)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	// A board's first read, which finds out whether its client caches, is
	// a plain GET on rueidis's own client built with DisableCache (the
	// board wraps it, and looks past its own wrapper): a board new to the
	// mirror reads it first while Redis answers it with ASK.
	fresh, err := lb.New(oc.client, name, lb.WithHotTop(10))
	require.NoError(t, err)
	for range 5 {
		got, err := fresh.Top(ctx, 5)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// mirrorOf is the slot and the key of the top mirror of board name on oc
// (one window, so one mirror).
func mirrorOf(t *testing.T, oc *ownCluster, name string) (uint16, string) {
	t.Helper()
	bySlot, err := oc.keysOf(name)
	require.NoError(t, err)
	for slot, ks := range bySlot {
		for _, k := range ks {
			if strings.Contains(k, ":topk:") {
				return slot, k
			}
		}
	}
	t.Fatalf("no top mirror of %s among %v", name, bySlot)
	return 0, ""
}
