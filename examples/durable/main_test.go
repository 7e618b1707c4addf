package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestRun runs the whole demonstration, at a smaller scale, against an
// embedded miniredis and the local PostgreSQL (PGSTORE_DSN, else
// DATABASE_URL, else the default), on tables of its own that it drops.
// Without PostgreSQL it skips, except under CI=true, where it fails.
func TestRun(t *testing.T) {
	dsn := os.Getenv("PGSTORE_DSN")
	if dsn == "" {
		dsn = os.Getenv("DATABASE_URL")
	}
	if dsn == "" {
		dsn = defaultDatabaseURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool := postgres(t, ctx, dsn)

	prefix := fmt.Sprintf("durable_test_%08x_", rand.Uint32())
	t.Cleanup(func() {
		var tables []string
		for _, name := range []string{"sealed_entries", "sealed_periods", "submissions", "schema_migrations"} {
			tables = append(tables, pgx.Identifier{prefix + name}.Sanitize())
		}
		if _, err := pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+strings.Join(tables, ", ")+" CASCADE"); err != nil {
			t.Errorf("dropping the test tables: %v", err)
		}
	})

	cfg := config{
		DatabaseURL: dsn,
		TablePrefix: prefix,
		Board:       "durable-test",
		Players:     300,
		Rounds:      5,
		RoundSize:   200,
		Live:        300,
		Workers:     4,
	}
	// Twice: a second run starts from what the first left behind.
	for i := range 2 {
		var out bytes.Buffer
		if err := run(ctx, &out, cfg); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, out.String())
		}
		got := out.String()
		for _, want := range []string{
			"Present() = false",
			"Duplicate = true",
			"Present() = false, Count: alltime 0, weekly 0.",
			"Present() = true",
			"Identical to before the loss",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("run %d: output lacks %q:\n%s", i+1, want, got)
			}
		}
		if strings.Contains(got, "clean: false") {
			t.Errorf("run %d: Verify found differences:\n%s", i+1, got)
		}
		if i == 1 && !strings.Contains(got, "Deleted the 1300 submissions an earlier run stored") {
			t.Errorf("the second run did not clear the first run's rows:\n%s", got)
		}
	}
}

// postgres connects to dsn, or skips (fails under CI=true) when no
// PostgreSQL answers there.
func postgres(t *testing.T, ctx context.Context, dsn string) *pgxpool.Pool {
	t.Helper()
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(pingCtx, dsn)
	if err == nil {
		if err = pool.Ping(pingCtx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		msg := fmt.Sprintf("no PostgreSQL at %s (set PGSTORE_DSN or DATABASE_URL): %v", redact(dsn), err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(pool.Close)
	return pool
}
