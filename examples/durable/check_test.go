package main

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/pgstore"
)

// TestCheckAgreesWithTheLibraries: config.check refuses a -table-prefix
// exactly when pgstore.New does, and a -board that leaderboard.New
// refuses (and text pgstore cannot store), so that the program exits 2
// for them before connecting, not 1 after.
func TestCheckAgreesWithTheLibraries(t *testing.T) {
	ok := config{Board: "durable-example", TablePrefix: "durable_example_", Players: 10, Rounds: 1, RoundSize: 10, Live: 1, Workers: 1}
	if err := ok.check(); err != nil {
		t.Fatal(err)
	}
	// A pool connects at its first use: New makes no call to it.
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, prefix := range []string{"", "a", "_", "durable_example_", "x9_", strings.Repeat("p", 30), strings.Repeat("p", 31),
		"Bad-", "bad-", "9x", "a b", "é", "a\x00", "ABC", "a.b"} {
		_, libErr := pgstore.New(pool, pgstore.WithTablePrefix(prefix))
		c := ok
		c.TablePrefix = prefix
		if err := c.check(); (err == nil) != (libErr == nil) {
			t.Errorf("-table-prefix %q: check %v, pgstore.New %v", prefix, err, libErr)
		}
	}
	mr := miniredis.RunT(t)
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, board := range []string{"durable-example", "é-board", "a:b", "", "a b", "a\tb", "a\x01b", "a\x7fb", "a\u200bb", "a\u00a0b",
		"{a}", "a}", "a#b", "a\x00b", "\u2028", strings.Repeat("b", 200), strings.Repeat("b", 201)} {
		_, libErr := leaderboard.New(client, board)
		c := ok
		c.Board = board
		if err := c.check(); (err == nil) != (libErr == nil) {
			t.Errorf("-board %q: check %v, leaderboard.New %v", board, err, libErr)
		}
	}
	// Valid for Redis, but not text PostgreSQL stores: refused too.
	c := ok
	c.Board = "a\xffb"
	if err := c.check(); err == nil {
		t.Errorf("-board %q: accepted", c.Board)
	}
}
