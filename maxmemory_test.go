package leaderboard_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestWritesAtMaxmemory: on a Redis over its maxmemory under noeviction,
// every write that may grow memory fails with Redis's OOM error and writes
// nothing. A script's OOM check comes before its first write only if that
// write is a command that can grow memory: a WithID Submit's script swept
// forgotten ids (ZREMRANGEBYSCORE) first, a sharded board's write of a
// member already on it took it out of its old shard (ZREM) first, and a
// Submit's or SubmitMany's script, or a batch, whose first window (or
// first submission) changed nothing set its expiry first, so Redis let
// every later write through, past the limit. The member "old" is 50 in
// the daily window and 5 in the weekly one, so a 25 changes the second
// window alone.
func TestWritesAtMaxmemory(t *testing.T) {
	s := faultStartServer(t)
	c := s.client()
	b := &testredis.Backend{Name: "redis", Client: &testredis.CountingClient{Client: c}}
	ctx := context.Background()
	kinds := maxmemoryKinds(t)
	boards := map[string]*lb.Leaderboard{}
	for kind, opts := range kinds {
		board, err := lb.New(c, "mm-"+strings.ReplaceAll(kind, " ", "-"), append(opts, lb.WithWindows(lb.Daily(), lb.Weekly()))...)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "old", 5, lb.WithID("seed"), lb.WithData("d"))
		require.NoError(t, err)
		require.NoError(t, board.Set(ctx, "old", 50, lb.In(lb.Daily())))
		_, err = board.Top(ctx, 3) // builds a hot top's mirror
		require.NoError(t, err)
		boards[kind] = board
	}
	overMaxmemory(t, s, c)

	for kind, board := range boards {
		t.Run(kind, func(t *testing.T) {
			name := "mm-" + strings.ReplaceAll(kind, " ", "-")
			before := b.Snapshot(t, name)
			for i, write := range maxmemoryWrites(t, board) {
				err := write.fn(fmt.Sprint("id-", i))
				require.ErrorContains(t, err, "OOM", "%s: %s", kind, write.what)
				after := b.Snapshot(t, name)
				for k := range before {
					if _, ok := after[k]; !ok && strings.Contains(k, "::topk") {
						// A hot top's mirror a sharded write deletes beside
						// it, as after any write that may change the top
						// (deletes free memory): the next read builds it.
						delete(before, k)
					}
				}
				require.Equal(t, before, after, "%s: %s wrote past maxmemory", kind, write.what)
			}
		})
	}
}

// maxmemoryWrite is one write TestWritesAtMaxmemory tries, given a fresh
// WithID id.
type maxmemoryWrite struct {
	what string
	fn   func(id string) error
}

// maxmemoryWrites are the writes TestWritesAtMaxmemory tries on board.
func maxmemoryWrites(t *testing.T, board *lb.Leaderboard) []maxmemoryWrite {
	ctx := context.Background()
	return []maxmemoryWrite{
		{"Submit of a new member", func(string) error { _, err := board.Submit(ctx, "new", 15); return err }},
		{"Submit of a member across a bound", func(string) error { _, err := board.Submit(ctx, "old", 25); return err }},
		{"Submit WithID", func(id string) error { _, err := board.Submit(ctx, "old", 25, lb.WithID(id)); return err }},
		{"Submit WithID of a new member", func(id string) error { _, err := board.Submit(ctx, "new", 25, lb.WithID(id)); return err }},
		{"SubmitMany", func(string) error { return board.SubmitMany(ctx, map[string]float64{"old": 25, "new": 15}) }},
		{"SubmitMany that changes the second window only", func(string) error { return board.SubmitMany(ctx, map[string]float64{"old": 25}) }},
		{"Set", func(string) error { return board.Set(ctx, "old", 25) }},
		{"SetData", func(string) error { return board.SetData(ctx, "old", "e") }},
		{"Batcher", func(string) error {
			bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
			require.NoError(t, err)
			defer bt.Close(ctx)
			_, err = bt.Submit(ctx, "old", 25)
			return err
		}},
		{"Batcher whose first submission changes nothing", func(string) error {
			bt, err := board.NewBatcher(lb.WithBatchWindow(50 * time.Millisecond))
			require.NoError(t, err)
			defer bt.Close(ctx)
			first := make(chan error, 1)
			go func() { _, err := bt.Submit(ctx, "old", 1); first <- err }()
			time.Sleep(10 * time.Millisecond)
			_, err = bt.Submit(ctx, "new", 15)
			<-first
			return err
		}},
	}
}

// maxmemoryKinds are the kinds of board the maxmemory tests write and
// read.
func maxmemoryKinds(t *testing.T) map[string][]lb.Option {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Resolution: time.Second, MaxScore: 1e6})
	require.NoError(t, err)
	return map[string][]lb.Option{
		"plain":           nil,
		"competition":     {lb.WithRanking(lb.Competition)},
		"accumulate":      {lb.WithPolicy(lb.Accumulate)},
		"tie-break":       {lb.WithTieBreak(tb)},
		"hot":             {lb.WithHotTop(3)},
		"sharded":         {lb.WithShards(10, 20)},
		"sharded hot":     {lb.WithShards(10, 20), lb.WithHotTop(3)},
		"sharded compete": {lb.WithShards(10, 20), lb.WithRanking(lb.Competition)},
	}
}

// overMaxmemory puts s over its maxmemory under noeviction. The used
// memory is read on c, whose connection stays open: closing one after
// reading would bring the server back under the limit.
func overMaxmemory(t *testing.T, s *faultServer, c rueidis.Client) {
	t.Helper()
	require.NoError(t, s.admin("CONFIG", "SET", "maxmemory-policy", "noeviction"))
	used, err := c.Do(context.Background(), c.B().Info().Section("memory").Build()).ToString()
	require.NoError(t, err)
	// A margin under what it uses now: its memory moves (buffers, a dict
	// resized), and a limit one byte under it let a read through as if
	// under the limit when it dipped.
	n := usedMemory(t, used)
	require.NoError(t, s.admin("CONFIG", "SET", "maxmemory", strconv.FormatInt(n-min(n/2, 1<<20), 10)))
}

// usedMemory is used_memory from an INFO memory reply.
func usedMemory(t *testing.T, info string) int64 {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}

// TestReadsAtMaxmemory: on a Redis over its maxmemory under noeviction
// every read still answers, as it did before the limit. Redis refuses every
// command queued in a MULTI then, reads too: Rank, Ranks, a Page past the
// first, Between, AroundScore and Among with data failed with OOM. Each
// read costs what it did before the limit, and a read that sent a MULTI one
// round trip more (read again by script), as the package doc says.
func TestReadsAtMaxmemory(t *testing.T) {
	s := faultStartServer(t)
	cc := &testredis.CountingClient{Client: s.client()}
	ctx := context.Background()
	kinds := maxmemoryKinds(t)
	boards := map[string]*lb.Leaderboard{}
	before := map[string][]readTrip{}
	for kind, opts := range kinds {
		board, err := lb.New(cc, "mr-"+strings.ReplaceAll(kind, " ", "-"), append(opts, lb.WithWindows(lb.AllTime(), lb.Daily()))...)
		require.NoError(t, err)
		for i := range 30 {
			_, err := board.Submit(ctx, fmt.Sprint("m", i), float64(i%12*3), lb.WithData(fmt.Sprint("d", i)))
			require.NoError(t, err)
		}
		boards[kind] = board
		readAll(t, board, cc) // the scripts loaded: no NOSCRIPT counted
		before[kind] = readAll(t, board, cc)
	}
	overMaxmemory(t, s, cc)
	_, err := boards["plain"].Submit(ctx, "new", 1)
	require.ErrorContains(t, err, "OOM", "over the limit")
	multis := int64(0)
	for kind, board := range boards {
		readAll(t, board, cc) // the scripts the reads fall back on loaded
		over := readAll(t, board, cc)
		require.Len(t, over, len(before[kind]))
		for i, r := range over {
			was := before[kind][i]
			require.Equal(t, was.answer, r.answer, "%s %s", kind, r.what)
			require.LessOrEqual(t, was.multis, int64(1), "%s %s: calls sending a MULTI", kind, r.what)
			require.Equal(t, was.calls+was.multis, r.calls, "%s %s: round trips over maxmemory", kind, r.what)
			multis += was.multis
		}
	}
	require.NotZero(t, multis, "reads that send a MULTI")
}

// readTrip is what a read answered and the calls it took, those that sent
// a MULTI among them.
type readTrip struct {
	what, answer  string
	calls, multis int64
}

// readAll runs every read of board on cc and returns what each answered.
func readAll(t *testing.T, board *lb.Leaderboard, cc *testredis.CountingClient) []readTrip {
	t.Helper()
	ctx := context.Background()
	var out []readTrip
	for qi, q := range [][]lb.Query{nil, {lb.IncludeData()}, {lb.In(lb.Daily())}} {
		reads := []struct {
			what string
			fn   func() (any, error)
		}{
			{"Top", func() (any, error) { return board.Top(ctx, 5, q...) }},
			{"Rank", func() (any, error) { return board.Rank(ctx, "m7", q...) }},
			{"Ranks", func() (any, error) { return board.Ranks(ctx, []string{"m7", "m8", "nobody"}, q...) }},
			{"Around", func() (any, error) { return board.Around(ctx, "m7", 2, q...) }},
			{"Page", func() (any, error) { return board.Page(ctx, 3, 4, q...) }},
			{"Range", func() (any, error) { return board.Range(ctx, 4, 9, q...) }},
			{"Between", func() (any, error) { return board.Between(ctx, 6, 20, 10, q...) }},
			{"CountBetween", func() (any, error) { return board.CountBetween(ctx, 6, 20, q...) }},
			{"AroundScore", func() (any, error) {
				r, es, err := board.AroundScore(ctx, 13, 2, q...)
				return fmt.Sprint(r, es), err
			}},
			{"Cutoff", func() (any, error) { return board.Cutoff(ctx, 30, q...) }},
			{"Among", func() (any, error) { return board.Among(ctx, []string{"m1", "m2", "m3"}, q...) }},
			{"Count", func() (any, error) { return board.Count(ctx, q...) }},
			{"All", func() (any, error) {
				var all []lb.Entry
				for e, err := range board.All(ctx, q...) {
					if err != nil {
						return nil, err
					}
					all = append(all, e)
				}
				return all, nil
			}},
		}
		for _, r := range reads {
			calls, multis := cc.Calls(), cc.Multis()
			v, err := r.fn()
			what := r.what + []string{"", " with data", " daily"}[qi]
			require.NoError(t, err, what)
			out = append(out, readTrip{what: what, answer: fmt.Sprintf("%+v", v), calls: cc.Calls() - calls, multis: cc.Multis() - multis})
		}
	}
	return out
}

// TestRemoveBetweenAtMaxmemory: on a Redis over its maxmemory under
// noeviction RemoveBetween still runs (a deletion frees memory), on every
// kind of board, with a store that records removals, and with
// WithReplicaReads, whose read of the members to remove goes to the
// primary in a MULTI, which Redis refuses whole then: on a sharded board,
// and with a store on an unsharded one, RemoveBetween failed with OOM and
// removed nothing.
func TestRemoveBetweenAtMaxmemory(t *testing.T) {
	s := faultStartServer(t)
	c := s.client()
	ctx := context.Background()
	kinds := maxmemoryKinds(t)
	for kind, opts := range maxmemoryKinds(t) {
		kinds[kind+" replica reads"] = append(slices.Clip(opts), lb.WithReplicaReads())
		kinds[kind+" store"] = append(slices.Clip(opts), lb.WithStore(newMemStore()))
		kinds[kind+" store replica reads"] = append(slices.Clip(opts), lb.WithStore(newMemStore()), lb.WithReplicaReads())
	}
	boards := map[string]*lb.Leaderboard{}
	for kind, opts := range kinds {
		board, err := lb.New(c, "mb-"+strings.ReplaceAll(kind, " ", "-"), opts...)
		require.NoError(t, err)
		for i := range 30 {
			_, err := board.Submit(ctx, fmt.Sprint("m", i), float64(i))
			require.NoError(t, err)
		}
		boards[kind] = board
	}
	overMaxmemory(t, s, c)
	for kind, board := range boards {
		n, err := board.RemoveBetween(ctx, 5, 24.5)
		require.NoError(t, err, "%s: RemoveBetween over maxmemory", kind)
		require.Equal(t, int64(20), n, kind)
		left, err := board.CountBetween(ctx, math.Inf(-1), math.Inf(1))
		require.NoError(t, err, kind)
		require.Equal(t, int64(10), left, kind)
	}
}

// TestMaintenanceAtMaxmemory: on a Redis over its maxmemory under
// noeviction, a board with WithReplicaReads still verifies, checks and
// seals: those read the primary in a MULTI, which Redis refuses whole then
// (every command queued in it, reads too), and Verify, Check (even
// without repair) and Seal failed with OOM. They now take such a read
// again by script.
func TestMaintenanceAtMaxmemory(t *testing.T) {
	s := faultStartServer(t)
	c := s.client()
	ctx := context.Background()
	clock := time.Now()
	boards := map[string]*lb.Leaderboard{}
	for kind, opts := range maxmemoryKinds(t) {
		opts = append(slices.Clip(opts), lb.WithStore(newMemStore()), lb.WithReplicaReads(),
			lb.WithWindows(lb.Daily()), lb.WithClock(func() time.Time { return clock }))
		board, err := lb.New(c, "mm-"+strings.ReplaceAll(kind, " ", "-"), opts...)
		require.NoError(t, err)
		for i := range 30 {
			_, err := board.Submit(ctx, fmt.Sprint("m", i), float64(i))
			require.NoError(t, err)
		}
		_, err = board.Rebuild(ctx) // Seal seals a board Present
		require.NoError(t, err)
		boards[kind] = board
	}
	overMaxmemory(t, s, c)
	for kind, board := range boards {
		reports, err := board.Verify(ctx)
		require.NoError(t, err, "%s: Verify over maxmemory", kind)
		for _, r := range reports {
			require.True(t, r.Clean(), "%s: %+v", kind, r)
		}
		if strings.HasPrefix(kind, "sharded") {
			checks, err := board.Check(ctx, false)
			require.NoError(t, err, "%s: Check over maxmemory", kind)
			for _, r := range checks {
				require.True(t, r.Clean(), "%s: %+v", kind, r)
				require.Equal(t, int64(30), r.Members, kind)
			}
		}
	}
	// Today's period (UTC) closed an hour ago: past the clock skew, and
	// within its retention (a day), whatever the hour the test runs at
	// (its start plus 25 hours was past the retention in a day's last hour).
	clock = clock.UTC().Truncate(24 * time.Hour).Add(25 * time.Hour)
	for kind, board := range boards {
		sealed, err := board.Seal(ctx, nil)
		require.NoError(t, err, "%s: Seal over maxmemory", kind)
		require.Len(t, sealed, 1, kind)
		require.Len(t, sealed[0].Entries, 30, kind)
	}
}
