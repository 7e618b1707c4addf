// Package redisnode walks the Redis servers behind a rueidis client for the
// example programs and the tests: their primaries (a Cluster's replicas
// hold copies, and refuse writes), and the keys matching a pattern on
// them, with SCAN so that a busy or shared Redis is never blocked.
package redisnode

import (
	"context"
	"slices"
	"strings"

	"github.com/redis/rueidis"
)

// IsPrimary reports whether a node is a primary (ROLE); a server without
// ROLE (miniredis) counts as one: it is its client's only node.
func IsPrimary(ctx context.Context, node rueidis.Client) bool {
	v, err := node.Do(ctx, node.B().Role().Build()).ToArray()
	if err != nil || len(v) == 0 {
		return true
	}
	role, _ := v[0].ToString()
	return role == "master"
}

// Primaries lists the addresses of c's primaries, sorted.
func Primaries(ctx context.Context, c rueidis.Client) []string {
	var addrs []string
	for a, n := range c.Nodes() {
		if IsPrimary(ctx, n) {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	return addrs
}

// Scan calls fn with each page of keys of node matching pattern, until
// the scan ends or fn fails.
func Scan(ctx context.Context, node rueidis.Client, pattern string, fn func(keys []string) error) error {
	var cursor uint64
	for {
		e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		if len(e.Elements) > 0 {
			if err := fn(e.Elements); err != nil {
				return err
			}
		}
		if e.Cursor == 0 {
			return nil
		}
		cursor = e.Cursor
	}
}

// ScanPrimaries is Scan on every primary of c.
func ScanPrimaries(ctx context.Context, c rueidis.Client, pattern string, fn func(keys []string) error) error {
	nodes := c.Nodes()
	for _, addr := range Primaries(ctx, c) {
		if err := Scan(ctx, nodes[addr], pattern, fn); err != nil {
			return err
		}
	}
	return nil
}

// Unlink unlinks every key matching pattern on every primary of c, each
// page of keys in one pipeline through c (which routes each key to its
// node), and returns how many it unlinked.
func Unlink(ctx context.Context, c rueidis.Client, pattern string) (int64, error) {
	var n int64
	err := ScanPrimaries(ctx, c, pattern, func(keys []string) error {
		cmds := make(rueidis.Commands, len(keys))
		for i, k := range keys {
			cmds[i] = c.B().Unlink().Key(k).Build()
		}
		for _, r := range c.DoMulti(ctx, cmds...) {
			d, err := r.AsInt64()
			if err != nil {
				return err
			}
			n += d
		}
		return nil
	})
	return n, err
}

// GlobEscape escapes s for a SCAN pattern, so that it matches s alone.
func GlobEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
