package leaderboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
)

// shortExecServer is a server that queues every read of a transaction and
// answers its EXEC with no replies: what a server or proxy that breaks the
// protocol would send.
func shortExecServer(t *testing.T) string {
	t.Helper()
	srv, err := server.NewServer("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	must := func(err error) { require.NoError(t, err) }
	must(srv.Register("HELLO", func(c *server.Peer, _ string, _ []string) {
		c.Resp3 = true
		c.WriteMapLen(3)
		c.WriteBulk("server")
		c.WriteBulk("redis")
		c.WriteBulk("version")
		c.WriteBulk("7.0.15")
		c.WriteBulk("proto")
		c.WriteInt(3)
	}))
	for _, cmd := range []string{"CLIENT", "MULTI"} {
		must(srv.Register(cmd, func(c *server.Peer, _ string, _ []string) { c.WriteOK() }))
	}
	for _, cmd := range []string{"ZCARD", "ZSCORE", "ZRANK", "ZREVRANK", "ZRANGE", "ZCOUNT"} {
		must(srv.Register(cmd, func(c *server.Peer, _ string, _ []string) { c.WriteInline("QUEUED") }))
	}
	must(srv.Register("EXEC", func(c *server.Peer, _ string, _ []string) { c.WriteLen(0) }))
	return srv.Addr().String()
}

// TestShortTransactionReply: a read whose transaction's EXEC answers fewer
// commands than were queued returns an error naming it, and does not panic
// indexing the replies it expected.
func TestShortTransactionReply(t *testing.T) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{shortExecServer(t)}, DisableCache: true, ForceSingleClient: true})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	board, err := lb.New(c, "short")
	require.NoError(t, err)
	ctx := context.Background()
	reads := map[string]func() error{
		"Rank":        func() error { _, err := board.Rank(ctx, "a"); return err },
		"Page":        func() error { _, err := board.Page(ctx, 1, 10); return err },
		"Between":     func() error { _, err := board.Between(ctx, 1, 5, 10); return err },
		"AroundScore": func() error { _, _, err := board.AroundScore(ctx, 3, 2); return err },
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			err := read()
			require.Error(t, err)
			require.True(t, strings.Contains(err.Error(), "EXEC answered 0 commands"), err.Error())
		})
	}
}
