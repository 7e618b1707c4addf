package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/redisnode"
)

// pattern is a SCAN glob of every key of the board, on the default "lb"
// prefix the program uses.
func (p program) pattern() string {
	return "lb:{" + redisnode.GlobEscape(p.board) + "}:*"
}

// cleanUp deletes the board's keys from a real Redis, or with keep says
// where they stay. It runs on a context of its own, so that it also runs
// after an interrupt.
func (p program) cleanUp(c rueidis.Client, keep bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if keep {
		fmt.Fprintf(p.stdout, "\nKept the board's keys, %s; the all-time key never expires by itself.\n"+
			"Delete them with: redis-cli --scan --pattern '%s' | xargs redis-cli unlink\n", p.pattern(), p.pattern())
		return nil
	}
	// On every primary (a Cluster's too), scanning so that a busy Redis
	// is never blocked.
	n, err := redisnode.Unlink(ctx, c, p.pattern())
	if err != nil {
		return fmt.Errorf("delete the board's keys (%s): %w", p.pattern(), err)
	}
	fmt.Fprintf(p.stdout, "\nDeleted the board's %d keys (%s); -keep leaves them.\n", n, p.pattern())
	return nil
}
