package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
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
// where they stay and how to delete them from that Redis; on the embedded
// miniredis, with keep, it says they go with the process. It runs on a
// context of its own, so that it also runs after an interrupt.
func (p program) cleanUp(r *redis, keep bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !r.real {
		if keep {
			fmt.Fprintf(p.stdout, "\n-keep: the board's keys (%s) were in the embedded miniredis, which ends with the program: none is left. "+
				"Set REDIS_URL to keep them in a Redis of yours.\n", p.pattern())
		}
		return nil
	}
	if keep {
		fmt.Fprintf(p.stdout, "\nKept the board's keys, %s; the all-time key never expires by itself.\n", p.pattern())
		fmt.Fprint(p.stdout, p.deleteHint(ctx, r))
		return nil
	}
	// On every primary (a Cluster's too), scanning so that a busy Redis
	// is never blocked. A server with no primary (a read-only replica)
	// deletes nothing: no "Deleted 0 keys" then.
	if len(redisnode.Primaries(ctx, r.client)) == 0 {
		return fmt.Errorf("delete the board's keys (%s): REDIS_URL's server is no primary (a read-only replica?): nothing deleted", p.pattern())
	}
	n, err := redisnode.Unlink(ctx, r.client, p.pattern())
	if err != nil {
		return fmt.Errorf("delete the board's keys (%s): %w", p.pattern(), err)
	}
	fmt.Fprintf(p.stdout, "\nDeleted the board's %d keys (%s); -keep leaves them.\n", n, p.pattern())
	return nil
}

// deleteHint is the redis-cli command that deletes the board's keys from
// the Redis the program wrote them to: REDIS_URL's host, port (or socket)
// and database, TLS; on a Cluster the node whose slot holds the board
// (its keys share one hash tag), with -c. It never holds REDIS_URL's user
// or password: it says to add them when the URL has them.
func (p program) deleteHint(ctx context.Context, r *redis) string {
	args := cliArgs(r.opt, r.unix)
	if r.client.Mode() == rueidis.ClientModeCluster {
		args = []string{"-c"}
		if addr, ok := slotNode(ctx, r.client, strings.Replace(p.pattern(), "*", "x", 1)); ok {
			o := r.opt
			o.InitAddress = []string{addr}
			args = append(args, cliArgs(o, false)...)
		} else {
			args = append(args, cliArgs(r.opt, false)...)
		}
	}
	cli := strings.Join(append([]string{"redis-cli"}, args...), " ")
	s := fmt.Sprintf("Delete them with: %s --scan --pattern '%s' | xargs %s unlink\n", cli, p.pattern(), cli)
	if r.opt.Username != "" || r.opt.Password != "" {
		s += "REDIS_URL holds a user or password, which is not printed: set REDISCLI_AUTH to the password " +
			"(or add -a <password>, and --user <user> for a user other than default, to both redis-cli commands).\n"
	}
	return s
}

// cliArgs are redis-cli's flags for the server of opt: -s for a socket,
// else -h and -p; --tls, and -n for a database other than 0.
func cliArgs(opt rueidis.ClientOption, unix bool) []string {
	var args []string
	addr := opt.InitAddress[0]
	if host, port, err := net.SplitHostPort(addr); err == nil && !unix {
		args = append(args, "-h", shellQuote(host), "-p", port)
	} else {
		args = append(args, "-s", shellQuote(addr))
	}
	if opt.TLSConfig != nil {
		args = append(args, "--tls")
	}
	if opt.SelectDB != 0 {
		args = append(args, "-n", strconv.Itoa(opt.SelectDB))
	}
	return args
}

// slotNode is the address of the Cluster primary serving key's slot
// (CLUSTER SLOTS); ok false when the reply does not say.
func slotNode(ctx context.Context, c rueidis.Client, key string) (addr string, ok bool) {
	cmd := c.B().Get().Key(key).Build()
	slot := int64(cmd.Slot())
	ranges, err := c.Do(ctx, c.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return "", false
	}
	for _, rg := range ranges {
		v, err := rg.ToArray()
		if err != nil || len(v) < 3 {
			continue
		}
		lo, err1 := v[0].AsInt64()
		hi, err2 := v[1].AsInt64()
		node, err3 := v[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(node) < 2 || slot < lo || slot > hi {
			continue
		}
		host, err1 := node[0].ToString()
		port, err2 := node[1].AsInt64()
		if err1 != nil || err2 != nil || host == "" || host == "?" {
			return "", false
		}
		return net.JoinHostPort(host, strconv.FormatInt(port, 10)), true
	}
	return "", false
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:/_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isUnix reports whether a REDIS_URL names a Unix socket.
func isUnix(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "unix"
}
