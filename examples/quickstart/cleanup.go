package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// pattern is a SCAN glob of every key of the board, on the default "lb"
// prefix the program uses.
func (p program) pattern() string {
	return "lb:{" + strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(p.board) + "}:*"
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
	n, err := unlinkMatching(ctx, c, p.pattern())
	if err != nil {
		return fmt.Errorf("delete the board's keys (%s): %w", p.pattern(), err)
	}
	fmt.Fprintf(p.stdout, "\nDeleted the board's %d keys (%s); -keep leaves them.\n", n, p.pattern())
	return nil
}

// unlinkMatching unlinks every key matching pattern on every primary (a
// Cluster's too; its replicas hold copies, and refuse writes), scanning so
// that a busy Redis is never blocked.
func unlinkMatching(ctx context.Context, c rueidis.Client, pattern string) (int64, error) {
	var n int64
	for _, node := range c.Nodes() {
		if !isPrimary(ctx, node) {
			continue
		}
		var cursor uint64
		for {
			e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
			if err != nil {
				return n, err
			}
			for _, k := range e.Elements {
				d, err := node.Do(ctx, node.B().Unlink().Key(k).Build()).AsInt64()
				if err != nil {
					return n, err
				}
				n += d
			}
			if e.Cursor == 0 {
				break
			}
			cursor = e.Cursor
		}
	}
	return n, nil
}

// isPrimary reports whether a node is a primary (ROLE); a server without
// ROLE (miniredis) counts as one.
func isPrimary(ctx context.Context, node rueidis.Client) bool {
	v, err := node.Do(ctx, node.B().Role().Build()).ToArray()
	if err != nil || len(v) == 0 {
		return true
	}
	role, _ := v[0].ToString()
	return role == "master"
}
