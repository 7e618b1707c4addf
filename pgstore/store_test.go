package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestNewRefusesBadArguments(t *testing.T) {
	_, err := New(nil)
	require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)

	p := testPool(t)
	for _, prefix := range []string{"Upper_", "has space", "1digit", "semi;colon", "quote\"", "a-b", "x234567890123456789012345678901"} {
		_, err := New(p, WithTablePrefix(prefix))
		require.ErrorIs(t, err, leaderboard.ErrInvalidArgument, prefix)
	}
	_, err = New(p, nil)
	require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)

	for _, prefix := range []string{"", "lb_", "_x", "x23456789012345678901234567890"} {
		s, err := New(p, WithTablePrefix(prefix))
		require.NoError(t, err, prefix)
		require.Equal(t, prefix+"submissions", s.tSubs)
	}
	s, err := New(p)
	require.NoError(t, err)
	require.Equal(t, "leaderboard_submissions", s.tSubs)
}

func TestMigrateTwiceAndConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStoreUnmigrated(t)
	other, err := New(s.pool, WithTablePrefix(s.prefix)) // another process
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				errs[i] = s.Migrate(ctx)
			} else {
				errs[i] = other.Migrate(ctx)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx))

	ms, err := loadMigrations()
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.tMigrations).Scan(&n))
	require.Equal(t, len(ms), n)

	// The store works after it.
	dup, err := s.Append(ctx, leaderboard.Submission{Board: "b", ID: "x", Member: "m", Score: 1, At: t0})
	require.NoError(t, err)
	require.False(t, dup)
}

// TestMigrateIntoMissingSchema: a pool whose search_path names a schema
// that does not exist fails Migrate with PostgreSQL's "no schema has been
// selected to create in", which says nothing of what to do; the error
// says to create the schema, and still matches the PostgreSQL error.
func TestMigrateIntoMissingSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	testPool(t) // the shared pool's DSN, or the test fails as every other
	cfg, err := pgxpool.ParseConfig(poolDSN)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["search_path"] = "pgstore_no_such_schema"
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer p.Close()
	s, err := New(p, WithTablePrefix(randomPrefix()))
	require.NoError(t, err)
	err = s.Migrate(ctx)
	require.Error(t, err)
	require.Contains(t, err.Error(), "create the schema")
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "3F000", pgErr.Code)
}

// TestLongestPrefix: every table, index and sequence name fits in
// PostgreSQL's 63 bytes with the longest prefix allowed.
func TestLongestPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := randomPrefix()
	prefix += strings.Repeat("x", maxPrefixLen-len(prefix))
	s, err := New(testPool(t), WithTablePrefix(prefix))
	require.NoError(t, err)
	t.Cleanup(func() { dropTables(t, s) })
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx))
	_, err = s.AppendBatch(ctx, []leaderboard.Submission{{Board: "b", ID: "1", Member: "m", Score: 1, At: t0}})
	require.NoError(t, err)
	first, err := s.Seal(ctx, "b", "daily", "2026-11-30", []leaderboard.Entry{{Member: "m", Score: 1, Rank: 1}})
	require.NoError(t, err)
	require.True(t, first)
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname LIKE $1", prefix+"%").Scan(&n))
	require.GreaterOrEqual(t, n, 10, "tables, indexes and the sequence")
}

func TestMigrationsAreNumbered(t *testing.T) {
	ms, err := loadMigrations()
	require.NoError(t, err)
	for i, m := range ms {
		require.Equal(t, int64(i+1), m.version, "migration versions run 1, 2, 3, ...")
		require.Contains(t, m.sql, "{{prefix}}")
	}
}

func TestAppendDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	sub := leaderboard.Submission{Board: "arena", ID: "req-1", Member: "alice", Score: 10, At: t0}

	dup, err := s.Append(ctx, sub)
	require.NoError(t, err)
	require.False(t, dup)

	// The same id again, even with other values: nothing recorded.
	again := sub
	again.Score, again.Member = 99, "bob"
	dup, err = s.Append(ctx, again)
	require.NoError(t, err)
	require.True(t, dup)

	// The same id on another board is another submission.
	other := sub
	other.Board = "arena2"
	dup, err = s.Append(ctx, other)
	require.NoError(t, err)
	require.False(t, dup)

	// No id: never a duplicate.
	for range 3 {
		dup, err = s.Append(ctx, leaderboard.Submission{Board: "arena", Member: "alice", Score: 1, At: t0})
		require.NoError(t, err)
		require.False(t, dup)
	}

	got := standings(t, s, leaderboard.StandingsQuery{Board: "arena", Policy: leaderboard.Accumulate})
	require.Equal(t, map[string]leaderboard.StoredStanding{
		"alice": {Member: "alice", Score: 13, At: t0},
	}, got)
	require.Equal(t, 5, countRows(t, s))
}

func TestAppendSameIDConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	for round := range 10 {
		id := fmt.Sprintf("retry-%d", round)
		var wg sync.WaitGroup
		dups := make([]bool, 5)
		errs := make([]error, 5)
		start := make(chan struct{})
		for i := range dups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				dups[i], errs[i] = s.Append(ctx, leaderboard.Submission{Board: "arena", ID: id, Member: "alice", Score: 1, At: t0})
			}()
		}
		close(start)
		wg.Wait()
		inserted := 0
		for i := range dups {
			require.NoError(t, errs[i])
			if !dups[i] {
				inserted++
			}
		}
		require.Equal(t, 1, inserted, "round %d: %v", round, dups)
	}
	require.Equal(t, 10, countRows(t, s))
	got := standings(t, s, leaderboard.StandingsQuery{Board: "arena", Policy: leaderboard.Accumulate})
	require.Equal(t, float64(10), got["alice"].Score)
}

func TestAppendRefusesWhatTextCannotHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	ok := leaderboard.Submission{Board: "arena", Member: "alice", Score: 1, At: t0}
	cases := []struct {
		name string
		edit func(*leaderboard.Submission)
		want error
	}{
		{"NUL member", func(s *leaderboard.Submission) { s.Member = "a\x00b" }, leaderboard.ErrInvalidMember},
		{"invalid UTF-8 member", func(s *leaderboard.Submission) { s.Member = "a\xffb" }, leaderboard.ErrInvalidMember},
		{"NUL board", func(s *leaderboard.Submission) { s.Board = "a\x00" }, leaderboard.ErrInvalidArgument},
		{"invalid UTF-8 id", func(s *leaderboard.Submission) { s.ID = "\xc3" }, leaderboard.ErrInvalidArgument},
		{"empty member", func(s *leaderboard.Submission) { s.Member = "" }, leaderboard.ErrInvalidMember},
		{"empty board", func(s *leaderboard.Submission) { s.Board = "" }, leaderboard.ErrInvalidArgument},
		{"NaN", func(s *leaderboard.Submission) { s.Score = math.NaN() }, leaderboard.ErrInvalidScore},
		{"+Inf", func(s *leaderboard.Submission) { s.Score = math.Inf(1) }, leaderboard.ErrInvalidScore},
	}
	for _, c := range cases {
		sub := ok
		c.edit(&sub)
		_, err := s.Append(ctx, sub)
		require.ErrorIs(t, err, c.want, c.name)
		require.ErrorContains(t, err, "pgstore: append: ", c.name)
		_, err = s.AppendBatch(ctx, []leaderboard.Submission{ok, sub})
		require.ErrorIs(t, err, c.want, c.name)
	}
	require.Equal(t, 0, countRows(t, s))
}

func TestTimesAndScoresRoundTrip(t *testing.T) {
	t.Parallel()
	testRoundTrip(t, newStore(t))
}

// TestSimpleProtocol runs the round trip and the model on a pool that sends
// and reads every value as text (pgx's simple protocol, as behind some
// connection poolers), which Standings scans the slow way.
func TestSimpleProtocol(t *testing.T) {
	t.Parallel()
	testPool(t)
	cfg, err := pgxpool.ParseConfig(poolDSN)
	require.NoError(t, err)
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	s, err := New(p, WithTablePrefix(randomPrefix()))
	require.NoError(t, err)
	t.Cleanup(func() { dropTables(t, s) })
	require.NoError(t, s.Migrate(context.Background()))
	testRoundTrip(t, s)
	testModel(t, s, 500)
}

func testRoundTrip(t *testing.T, s *Store) {
	ctx := context.Background()
	tokyo := time.FixedZone("JST", 9*3600)
	times := []time.Time{
		time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC), // nanoseconds: truncated
		time.Date(2026, 3, 29, 1, 59, 59, 999999999, tokyo),
		time.Date(1999, 12, 31, 23, 59, 59, 999999500, time.UTC), // before PostgreSQL's epoch
		time.Date(1969, 7, 20, 20, 17, 40, 1500, time.UTC),       // before Unix's
		time.Now(), // with a monotonic reading
		{},         // year 1
	}
	scores := []float64{0.1, -0.3, math.MaxFloat64, math.SmallestNonzeroFloat64, -math.MaxFloat64, 1e-300, 123456789.123456789}
	for i, at := range times {
		sub := leaderboard.Submission{Board: "b", Member: fmt.Sprintf("m%d", i), Score: scores[i%len(scores)], At: at}
		_, err := s.Append(ctx, sub)
		require.NoError(t, err)
		sub.Board = "batch"
		_, err = s.AppendBatch(ctx, []leaderboard.Submission{sub})
		require.NoError(t, err)
	}
	for _, board := range []string{"b", "batch"} {
		got := standings(t, s, leaderboard.StandingsQuery{Board: board, Policy: leaderboard.Replace})
		require.Len(t, got, len(times))
		for i, at := range times {
			st := got[fmt.Sprintf("m%d", i)]
			want := at.Truncate(time.Microsecond)
			assert.True(t, st.At.Equal(want), "%s m%d: got %v, want %v", board, i, st.At, want)
			assert.Equal(t, want.UTC(), st.At, "comes back as UTC")
			assert.Equal(t, math.Float64bits(scores[i%len(scores)]), math.Float64bits(st.Score))
		}
	}
}

func TestStandingsStopsOnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	subs := make([]leaderboard.Submission, 5000)
	for i := range subs {
		subs[i] = leaderboard.Submission{Board: "arena", Member: fmt.Sprintf("m%d", i), Score: float64(i), At: t0}
	}
	_, err := s.AppendBatch(ctx, subs)
	require.NoError(t, err)

	stop := errors.New("stop")
	for _, p := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate} {
		calls := 0
		err = s.Standings(ctx, leaderboard.StandingsQuery{Board: "arena", Policy: p}, func(leaderboard.StoredStanding) error {
			calls++
			if calls == 3 {
				return stop
			}
			return nil
		})
		require.ErrorIs(t, err, stop)
		require.Equal(t, 3, calls)
	}
	// The pool is still fine.
	require.Len(t, standings(t, s, leaderboard.StandingsQuery{Board: "arena"}), len(subs))

	// A cancelled context is an error too.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = s.Standings(cctx, leaderboard.StandingsQuery{Board: "arena"}, func(leaderboard.StoredStanding) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "pgstore: standings: ")
}

func TestStandingsRefusesBadQueries(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, q := range []leaderboard.StandingsQuery{
		{Board: "b", Policy: leaderboard.Policy(7)},
		{Board: "b", Order: leaderboard.Order(-1)},
	} {
		err := s.Standings(context.Background(), q, func(leaderboard.StoredStanding) error { return nil })
		require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
	}
}

func TestStandingsOfAnEmptyBoard(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	require.Empty(t, standings(t, s, leaderboard.StandingsQuery{Board: "nobody"}))
}

func TestSealOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)

	entries, ok, err := s.Sealed(ctx, "arena", "weekly", "2026-W48")
	require.NoError(t, err)
	require.False(t, ok)
	require.Nil(t, entries)

	// Competition ranks: equal ranks are kept, in the order given.
	week := []leaderboard.Entry{
		{Member: "carol", Score: 0.30000000000000004, Rank: 1},
		{Member: "bob", Score: 20, Rank: 2},
		{Member: "alice", Score: 20, Rank: 2},
		{Member: "dave", Score: -1e-300, Rank: 4},
	}
	first, err := s.Seal(ctx, "arena", "weekly", "2026-W48", week)
	require.NoError(t, err)
	require.True(t, first)

	first, err = s.Seal(ctx, "arena", "weekly", "2026-W48", []leaderboard.Entry{{Member: "mallory", Score: 1e9, Rank: 1}})
	require.NoError(t, err)
	require.False(t, first)

	entries, ok, err = s.Sealed(ctx, "arena", "weekly", "2026-W48")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, week, entries)

	// Other boards, windows and periods are other periods.
	for _, k := range [][3]string{{"arena2", "weekly", "2026-W48"}, {"arena", "daily", "2026-W48"}, {"arena", "weekly", "2026-W49"}} {
		_, ok, err := s.Sealed(ctx, k[0], k[1], k[2])
		require.NoError(t, err)
		require.False(t, ok, k)
	}

	// A period sealed with no entries is sealed.
	first, err = s.Seal(ctx, "arena", "daily", "2026-11-29", nil)
	require.NoError(t, err)
	require.True(t, first)
	entries, ok, err = s.Sealed(ctx, "arena", "daily", "2026-11-29")
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, entries)
	first, err = s.Seal(ctx, "arena", "daily", "2026-11-29", week)
	require.NoError(t, err)
	require.False(t, first)
	entries, _, err = s.Sealed(ctx, "arena", "daily", "2026-11-29")
	require.NoError(t, err)
	require.Empty(t, entries)
}

func TestSealConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	var wg sync.WaitGroup
	firsts := make([]bool, 8)
	errs := make([]error, len(firsts))
	start := make(chan struct{})
	for i := range firsts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			entries := make([]leaderboard.Entry, 1000)
			for r := range entries {
				entries[r] = leaderboard.Entry{Member: fmt.Sprintf("w%d-m%d", i, r), Score: float64(1000 - r), Rank: int64(r + 1)}
			}
			firsts[i], errs[i] = s.Seal(ctx, "arena", "daily", "2026-11-30", entries)
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i := range firsts {
		require.NoError(t, errs[i])
		if firsts[i] {
			require.Equal(t, -1, winner, "two first seals")
			winner = i
		}
	}
	require.NotEqual(t, -1, winner)
	entries, ok, err := s.Sealed(ctx, "arena", "daily", "2026-11-30")
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, entries, 1000)
	for r, e := range entries {
		require.Equal(t, fmt.Sprintf("w%d-m%d", winner, r), e.Member)
		require.Equal(t, int64(r+1), e.Rank)
	}
}

func TestSealRefusesBadText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	_, err := s.Seal(ctx, "arena", "we\x00ekly", "p", nil)
	require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
	_, err = s.Seal(ctx, "arena", "weekly", "p", []leaderboard.Entry{{Member: "\xff", Rank: 1}})
	require.ErrorIs(t, err, leaderboard.ErrInvalidMember)
	require.ErrorContains(t, err, "pgstore: seal: ")
	// Nothing was sealed: a good seal is still the first.
	first, err := s.Seal(ctx, "arena", "weekly", "p", nil)
	require.NoError(t, err)
	require.True(t, first)
}

// standings collects Standings by member, checking the stream's order and
// that no member comes twice.
func standings(tb testing.TB, s *Store, q leaderboard.StandingsQuery) map[string]leaderboard.StoredStanding {
	tb.Helper()
	got := map[string]leaderboard.StoredStanding{}
	var prev *leaderboard.StoredStanding
	err := s.Standings(context.Background(), q, func(st leaderboard.StoredStanding) error {
		if _, dup := got[st.Member]; dup {
			return fmt.Errorf("member %q twice", st.Member)
		}
		if prev != nil {
			if (q.Order == leaderboard.HighestFirst && st.Score > prev.Score) ||
				(q.Order == leaderboard.LowestFirst && st.Score < prev.Score) {
				return fmt.Errorf("%v after %v on %v", st.Score, prev.Score, q.Order)
			}
		}
		got[st.Member] = st
		prev = &st
		return nil
	})
	require.NoError(tb, err)
	return got
}

func countRows(tb testing.TB, s *Store) int {
	tb.Helper()
	var n int
	require.NoError(tb, s.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+s.tSubs).Scan(&n))
	return n
}
