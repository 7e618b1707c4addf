package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// The tests run against a real PostgreSQL: PGSTORE_DSN, else DATABASE_URL,
// else the local test database. Without one they skip, except under CI=true,
// where they fail.
const defaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	poolOnce sync.Once
	pool     *pgxpool.Pool
	poolErr  error
	poolDSN  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pool != nil {
		pool.Close()
	}
	os.Exit(code)
}

// testPool returns the package's shared pool, or skips (fails under CI=true)
// when no PostgreSQL answers.
func testPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	poolOnce.Do(func() {
		poolDSN = os.Getenv("PGSTORE_DSN")
		if poolDSN == "" {
			poolDSN = os.Getenv("DATABASE_URL")
		}
		if poolDSN == "" {
			poolDSN = defaultDSN
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cfg, err := pgxpool.ParseConfig(poolDSN)
		if err != nil {
			poolErr = err
			return
		}
		cfg.MaxConns = 16
		p, err := pgxpool.NewWithConfig(ctx, cfg)
		if err == nil {
			err = p.Ping(ctx)
		}
		if err != nil {
			if p != nil {
				p.Close()
			}
			poolErr = err
			return
		}
		pool = p
	})
	if poolErr != nil {
		msg := fmt.Sprintf("no PostgreSQL at %s (set PGSTORE_DSN or DATABASE_URL): %v", redactDSN(poolDSN), poolErr)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return pool
}

// randomPrefix is a table prefix no other test run uses.
func randomPrefix() string {
	return fmt.Sprintf("pgst_%016x_", rand.Uint64())
}

// newStore returns a migrated store on tables of its own, dropped when the
// test ends.
func newStore(tb testing.TB) *Store {
	tb.Helper()
	s := newStoreUnmigrated(tb)
	require.NoError(tb, s.Migrate(context.Background()))
	return s
}

func newStoreUnmigrated(tb testing.TB) *Store {
	tb.Helper()
	p := testPool(tb)
	s, err := New(p, WithTablePrefix(randomPrefix()))
	require.NoError(tb, err)
	tb.Cleanup(func() { dropTables(tb, s) })
	return s
}

func dropTables(tb testing.TB, s *Store) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.pool.Exec(ctx, "DROP TABLE IF EXISTS "+s.tEntries+", "+s.tPeriods+", "+s.tKept+", "+s.tKeptPeriods+", "+s.tRemovals+", "+s.tResets+", "+s.tCorrections+", "+s.tSubs+", "+s.tMigrations+" CASCADE")
	if err != nil {
		tb.Errorf("dropping the test tables: %v", err)
	}
}

// redactDSN is a DSN fit for a test's message: a URL with its password
// masked, or, for the key=value form (which may hold password=...), only
// that it was given.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return "the configured DSN"
}
