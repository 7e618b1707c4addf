package testredis

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/redisurl"
)

// Replicated is a real Redis with replicas: a client that sends every
// read-only command to a replica (rueidis's SendToReplicas), and a client
// of its own for each primary and each replica, to read their INFO.
type Replicated struct {
	// Name is "redis" (a standalone primary and its replica) or "cluster".
	Name string
	// Reader sends read-only commands to replicas, the rest to primaries.
	Reader rueidis.Client
	// Primaries and Replicas are one client per node.
	Primaries, Replicas []rueidis.Client
}

// ReplicaAddr is the standalone Redis's replica the tests use
// (REDIS_REPLICA_ADDR; default 127.0.0.1:6380, which the test command
// starts as a replica of REDIS_URL's server).
func ReplicaAddr() string {
	if a := os.Getenv("REDIS_REPLICA_ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:6380"
}

// toReplicas sends every read-only command to a replica.
func toReplicas(cmd rueidis.Completed) bool { return cmd.IsReadOnly() }

// EachReplicated runs body on the standalone Redis with its replica and on
// the Cluster with its replicas, as subtests "redis" and "cluster". A
// missing one skips, or fails under CI=true.
func EachReplicated(t *testing.T, body func(t *testing.T, r *Replicated)) {
	t.Helper()
	t.Run("redis", func(t *testing.T) { body(t, standaloneReplicated(t)) })
	t.Run("cluster", func(t *testing.T) { body(t, clusterReplicated(t)) })
}

// missing skips or fails (CI=true) for a server the test needs.
func missing(t testing.TB, what string, err error) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s is required under CI=true: %v", what, err)
	}
	t.Skipf("no %s (run the test command): %v", what, err)
}

func standaloneReplicated(t *testing.T) *Replicated {
	opt, err := redisurl.Parse(URL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	opt.DisableCache = true
	primary := nodeClient(t, opt, opt.InitAddress[0])
	replica := nodeClient(t, opt, ReplicaAddr())
	if primary == nil || replica == nil {
		missing(t, fmt.Sprintf("a replica of %s at %s", redisurl.Redact(URL()), ReplicaAddr()), fmt.Errorf("a node does not answer"))
	}
	if err := isReplicaOf(replica, opt.InitAddress[0]); err != nil {
		missing(t, fmt.Sprintf("a replica of %s at %s", redisurl.Redact(URL()), ReplicaAddr()), err)
	}
	ropt := opt
	ropt.Standalone.ReplicaAddress = []string{ReplicaAddr()}
	ropt.SendToReplicas = toReplicas
	reader, err := rueidis.NewClient(ropt)
	if err != nil {
		t.Fatalf("replica reader: %v", err)
	}
	t.Cleanup(reader.Close)
	return &Replicated{Name: "redis", Reader: reader, Primaries: []rueidis.Client{primary}, Replicas: []rueidis.Client{replica}}
}

func clusterReplicated(t *testing.T) *Replicated {
	reader, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: ClusterAddrs(), DisableCache: true, SendToReplicas: toReplicas})
	if err != nil {
		missing(t, fmt.Sprintf("a Redis Cluster at %v", ClusterAddrs()), err)
	}
	t.Cleanup(reader.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	nodes, err := reader.Do(ctx, reader.B().ClusterNodes().Build()).ToString()
	if err != nil {
		missing(t, fmt.Sprintf("a Redis Cluster at %v", ClusterAddrs()), err)
	}
	r := &Replicated{Name: "cluster", Reader: reader}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line) // id addr@bus flags master ...
		if len(f) < 3 || strings.Contains(f[2], "fail") {
			continue
		}
		addr := strings.SplitN(f[1], "@", 2)[0]
		c := nodeClient(t, rueidis.ClientOption{DisableCache: true}, addr)
		if c == nil {
			continue
		}
		if strings.Contains(f[2], "slave") {
			r.Replicas = append(r.Replicas, c)
		} else {
			r.Primaries = append(r.Primaries, c)
		}
	}
	if len(r.Replicas) < len(r.Primaries) || len(r.Primaries) == 0 {
		missing(t, fmt.Sprintf("a Redis Cluster at %v with a replica per master", ClusterAddrs()),
			fmt.Errorf("%d masters, %d replicas", len(r.Primaries), len(r.Replicas)))
	}
	return r
}

// nodeClient is a client of one node alone (nil when it does not answer).
func nodeClient(t testing.TB, opt rueidis.ClientOption, addr string) rueidis.Client {
	opt.InitAddress = []string{addr}
	opt.ForceSingleClient = true
	opt.Standalone = rueidis.StandaloneOption{}
	opt.SendToReplicas = nil
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil
	}
	t.Cleanup(c.Close)
	return c
}

// isReplicaOf checks that replica replicates primary ("host:port") and is
// in sync.
func isReplicaOf(replica rueidis.Client, primary string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := replica.Do(ctx, replica.B().Info().Section("replication").Build()).ToString()
	if err != nil {
		return err
	}
	host, port, _ := strings.Cut(primary, ":")
	if !strings.Contains(info, "role:slave") || !strings.Contains(info, "master_port:"+port) || !strings.Contains(info, "master_link_status:up") {
		return fmt.Errorf("%s is no replica of %s in sync (%s)", "the replica", host+":"+port, strings.Join(strings.Fields(info), " "))
	}
	return nil
}

// CommandCalls sums, over clients, the calls INFO commandstats counts for
// each command (lower case, as INFO names them: "evalsha_ro", "zrange").
func CommandCalls(t testing.TB, clients []rueidis.Client) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, c := range clients {
		info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			t.Fatalf("INFO commandstats: %v", err)
		}
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			var calls int64
			if _, err := fmt.Sscanf(rest, "calls=%d", &calls); err == nil {
				out[strings.TrimPrefix(name, "cmdstat_")] += calls
			}
		}
	}
	return out
}

// ClusterReplicated is the Cluster with its replicas (EachReplicated's
// "cluster"), for a test of the Cluster alone. Without one it skips, or
// fails under CI=true.
func ClusterReplicated(t *testing.T) *Replicated {
	t.Helper()
	return clusterReplicated(t)
}

// CaughtUp waits until every replica has applied all that its primary held
// when CaughtUp was called (the primary's master_repl_offset then, against
// the replica's slave_repl_offset), for up to 10 s: what the test wrote
// before is then on every replica, however far others write on. A sleep
// guesses at replication; under load a replica trails by more than a guess.
func (r *Replicated) CaughtUp(t testing.TB) {
	t.Helper()
	want := map[string]int64{} // a primary's port -> its offset
	for _, p := range r.Primaries {
		port := infoField(t, p, "server", "tcp_port")
		off, err := strconv.ParseInt(infoField(t, p, "replication", "master_repl_offset"), 10, 64)
		if err != nil {
			t.Fatalf("a primary's master_repl_offset: %v", err)
		}
		want[port] = off
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, rep := range r.Replicas {
		port := infoField(t, rep, "replication", "master_port")
		w, ok := want[port]
		if !ok {
			t.Fatalf("a replica of port %s, which no primary of %s has", port, r.Name)
		}
		for {
			off, err := strconv.ParseInt(infoField(t, rep, "replication", "slave_repl_offset"), 10, 64)
			if err != nil {
				t.Fatalf("a replica's slave_repl_offset: %v", err)
			}
			if off >= w {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("a replica of port %s at offset %d, its primary at %d, after 10s", port, off, w)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// infoField is one field of a node's INFO section.
func infoField(t testing.TB, c rueidis.Client, section, field string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.Do(ctx, c.B().Info().Section(section).Build()).ToString()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return ""
}
