package leaderboard_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
)

// TestSlotMigration drives boards on a Redis Cluster while their slots
// move between nodes key by key, as a resharding moves them: every call
// must succeed (a multi-key script or MULTI whose keys straddle the two
// nodes is answered TRYAGAIN, before it runs, until the slot's keys are
// all on one side) and the boards must end as a Go model of the calls
// says. The Cluster is the test's own, three masters started here: a
// migration reconfigures the Cluster, which a test must not do to the
// shared one that the test command starts (REDIS_CLUSTER_ADDRS), where
// other tests run at the same time.
func TestSlotMigration(t *testing.T) {
	oc := startOwnCluster(t)
	for _, policy := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
		for _, sharded := range []bool{false, true} {
			t.Run(fmt.Sprintf("policy=%d/sharded=%v", policy, sharded), func(t *testing.T) {
				runSlotMigration(t, oc, policy, sharded, uint64(policy)*2+map[bool]uint64{false: 0, true: 1}[sharded])
			})
		}
	}
}

// ownCluster is a three-master Redis Cluster of the test's own.
type ownCluster struct {
	t      *testing.T
	addrs  []string
	ids    []string
	admins []rueidis.Client // one per node, to that node alone
	client rueidis.Client   // a cluster client, as a user's
	owner  [16384]int       // the node that owns each slot
}

// startOwnCluster starts three cluster-enabled redis-servers on free
// ports (their bus ports chosen too, as the default, port + 10000, may be
// out of range or taken), gives each a third of the slots, joins them and
// waits until every node sees the Cluster ok. Without redis-server the
// test skips (fails under CI=true), as faultStartServer does.
func startOwnCluster(t *testing.T) *ownCluster {
	t.Helper()
	oc := &ownCluster{t: t}
	var buses []string
	for range 3 {
		bus := faultFreePort(t)
		s := faultStartServer(t, "--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		oc.addrs = append(oc.addrs, s.addr())
		buses = append(buses, strconv.Itoa(bus))
	}
	ctx := context.Background()
	for i, addr := range oc.addrs {
		var c rueidis.Client
		require.Eventually(t, func() bool {
			var err error
			c, err = rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, ForceSingleClient: true})
			return err == nil
		}, 10*time.Second, 20*time.Millisecond, "redis-server on %s did not start", addr)
		t.Cleanup(c.Close)
		oc.admins = append(oc.admins, c)
		id, err := c.Do(ctx, c.B().ClusterMyid().Build()).ToString()
		require.NoError(t, err)
		oc.ids = append(oc.ids, id)
		lo, hi := i*16384/3, (i+1)*16384/3
		slots := make([]string, 0, hi-lo)
		for s := lo; s < hi; s++ {
			slots = append(slots, strconv.Itoa(s))
			oc.owner[s] = i
		}
		require.NoError(t, oc.admin(i, append([]string{"CLUSTER", "ADDSLOTS"}, slots...)...))
	}
	for i, addr := range oc.addrs[1:] {
		host, port, _ := net.SplitHostPort(addr)
		require.NoError(t, oc.admin(0, "CLUSTER", "MEET", host, port, buses[i+1]))
	}
	require.Eventually(t, func() bool {
		for i := range oc.admins {
			info, err := oc.adminString(i, "CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_known_nodes:3") {
				return false
			}
		}
		return oc.unsettled(-1, 0) == ""
	}, 20*time.Second, 50*time.Millisecond, "the test's own Cluster did not reach cluster_state:ok with distinct epochs")
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: oc.addrs, DisableCache: true})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.Equal(t, rueidis.ClientModeCluster, c.Mode())
	oc.client = c
	return oc
}

// adminTimeout bounds each command the test sends a node itself, so that
// a node that stops answering fails the test rather than hanging it.
const adminTimeout = 10 * time.Second

func (oc *ownCluster) admin(node int, args ...string) error {
	_, err := oc.adminString(node, args...)
	return err
}

func (oc *ownCluster) adminString(node int, args ...string) (string, error) {
	c := oc.admins[node]
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	res := c.Do(ctx, c.B().Arbitrary(args...).Build())
	if err := res.Error(); err != nil {
		return "", err
	}
	s, _ := res.ToString() // MIGRATE, SETSLOT: a status; not every reply is a string
	return s, nil
}

// keysOf lists the board's keys by slot, from every node (a slot being
// migrated has keys on two).
func (oc *ownCluster) keysOf(name string) (map[uint16][]string, error) {
	out := map[uint16][]string{}
	for _, c := range oc.admins {
		for _, pattern := range []string{"*{" + name + "}*", "*{" + name + "#*"} {
			var cursor uint64
			for {
				ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
				e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
				cancel()
				if err != nil {
					return nil, err
				}
				for _, k := range e.Elements {
					cmd := oc.client.B().Get().Key(k).Build() // a cluster builder computes slots
					s := cmd.Slot()
					out[s] = append(out[s], k)
				}
				if cursor = e.Cursor; cursor == 0 {
					break
				}
			}
		}
	}
	return out, nil
}

// migrate moves slot to the next node the standard way (redis-cli's
// reshard): the target imports, the source migrates, the keys go one
// MIGRATE each with a pause between (so that the board's calls meet the
// slot split between the two nodes), and then every node learns the new
// owner, the target first.
func (oc *ownCluster) migrate(slot uint16) error {
	src := oc.owner[slot]
	dst := (src + 1) % 3
	s := strconv.Itoa(int(slot))
	if err := oc.admin(dst, "CLUSTER", "SETSLOT", s, "IMPORTING", oc.ids[src]); err != nil {
		return fmt.Errorf("importing: %w", err)
	}
	if err := oc.admin(src, "CLUSTER", "SETSLOT", s, "MIGRATING", oc.ids[dst]); err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	host, port, _ := net.SplitHostPort(oc.addrs[dst])
	for moved := 0; ; moved++ {
		ks, err := oc.keysIn(src, slot)
		if err != nil {
			return fmt.Errorf("getkeysinslot: %w", err)
		}
		if len(ks) == 0 {
			break
		}
		if moved > 10000 {
			return fmt.Errorf("slot %d: %s still on %s after %d MIGRATEs", slot, ks[0], oc.addrs[src], moved)
		}
		if err := oc.admin(src, "MIGRATE", host, port, "", "0", "5000", "KEYS", ks[0]); err != nil {
			return fmt.Errorf("migrate %s: %w", ks[0], err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	for _, n := range []int{dst, src, 3 - src - dst} {
		if err := oc.admin(n, "CLUSTER", "SETSLOT", s, "NODE", oc.ids[dst]); err != nil {
			return fmt.Errorf("setslot node on %s: %w", oc.addrs[n], err)
		}
	}
	oc.owner[slot] = dst
	return oc.settle(slot, dst)
}

// settle waits until every node sees dst own slot, under config epochs
// that every node sees alike and no two nodes share, as redis-cli waits
// for the nodes to agree before it moves more. A claim gossiped before
// the move with an epoch as high as dst's would take the slot back, and
// the node that lost it would delete its keys: a test that moves the
// same slot again at once could see a board's keys vanish.
func (oc *ownCluster) settle(slot uint16, dst int) error {
	var last string
	for range 500 {
		if last = oc.unsettled(int(slot), dst); last == "" {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("slot %d: the nodes do not agree: %s", slot, last)
}

// unsettled says what keeps the nodes from agreeing, "" when nothing
// (slot -1: on the epochs alone).
func (oc *ownCluster) unsettled(slot, dst int) string {
	var epochs map[string]string
	for i := range oc.admins {
		view, err := oc.adminString(i, "CLUSTER", "NODES")
		if err != nil {
			return err.Error()
		}
		view = strings.TrimPrefix(view, "txt:") // RESP3's verbatim string
		seen := map[string]string{}
		owner := ""
		for _, line := range strings.Split(strings.TrimSpace(view), "\n") {
			f := strings.Fields(line)
			if len(f) < 8 {
				return "a short CLUSTER NODES line: " + line
			}
			seen[f[0]] = f[6]
			for _, r := range f[8:] {
				lo, hi, _ := strings.Cut(r, "-")
				if hi == "" {
					hi = lo
				}
				l, err1 := strconv.Atoi(lo)
				h, err2 := strconv.Atoi(hi)
				if err1 == nil && err2 == nil && l <= slot && slot <= h {
					owner = f[0]
				}
			}
		}
		if slot >= 0 && owner != oc.ids[dst] {
			return fmt.Sprintf("%s sees %q own it", oc.addrs[i], owner)
		}
		if epochs == nil {
			epochs = seen
		} else if !maps.Equal(epochs, seen) {
			return fmt.Sprintf("epochs %v and %v", epochs, seen)
		}
	}
	distinct := map[string]bool{}
	for _, e := range epochs {
		distinct[e] = true
	}
	if len(distinct) != len(epochs) {
		return fmt.Sprintf("epochs shared: %v", epochs)
	}
	return ""
}

// keysIn is one key of slot on a node, if it holds any.
func (oc *ownCluster) keysIn(node int, slot uint16) ([]string, error) {
	c := oc.admins[node]
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	return c.Do(ctx, c.B().ClusterGetkeysinslot().Slot(int64(slot)).Count(1).Build()).AsStrSlice()
}

// migrateWhile moves the board's slots holding two keys or more (those a
// multi-key call can find split), one after another, until stop is
// closed; the migration under way then ends before it returns. It
// returns how many it moved and the first error.
func (oc *ownCluster) migrateWhile(name string, rng *rand.Rand, stop <-chan struct{}) (int, error) {
	moved := 0
	for {
		select {
		case <-stop:
			return moved, nil
		default:
		}
		bySlot, err := oc.keysOf(name)
		if err != nil {
			return moved, err
		}
		var slots []uint16
		for s, ks := range bySlot {
			if len(ks) > 1 {
				slots = append(slots, s)
			}
		}
		if len(slots) == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		slices.Sort(slots)
		if err := oc.migrate(slots[rng.IntN(len(slots))]); err != nil {
			return moved, err
		}
		moved++
	}
}

// migrationModel is what the calls that succeeded leave on a board: per
// window a map member -> score, the board HighestFirst and Ordinal.
type migrationModel struct {
	policy lb.Policy
	boards [2]map[string]float64 // alltime, daily
}

func (m *migrationModel) apply(w int, member string, score float64) {
	old, ok := m.boards[w][member]
	switch {
	case !ok || m.policy == lb.Replace:
		m.boards[w][member] = score
	case m.policy == lb.Accumulate:
		m.boards[w][member] = old + score
	default:
		m.boards[w][member] = max(old, score)
	}
}

// entries is a window in read order: score, then member bytes descending.
func (m *migrationModel) entries(w int) []lb.Entry {
	out := make([]lb.Entry, 0, len(m.boards[w]))
	for k, v := range m.boards[w] {
		out = append(out, lb.Entry{Member: k, Score: v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Member > out[j].Member
	})
	for i := range out {
		out[i].Rank = int64(i + 1)
	}
	return out
}

// migrationRun is one board's workload.
type migrationRun struct {
	t      *testing.T
	ctx    context.Context
	rng    *rand.Rand
	board  *lb.Leaderboard
	batch  *lb.Batcher
	m      *migrationModel
	pool   []string
	step   int
	daily  lb.Query
	logged []string
}

func runSlotMigration(t *testing.T, oc *ownCluster, policy lb.Policy, sharded bool, seed uint64) {
	name := fmt.Sprintf("migrate%d.%d", seed, time.Now().UnixNano())
	clock := &testClock{now: modelDay1}
	opts := []lb.Option{lb.WithPolicy(policy), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(clock.Now)}
	if sharded {
		opts = append(opts, lb.WithShards(0, 10, 20))
	}
	client := &refusalCounter{Client: oc.client}
	board, err := lb.New(client, name, opts...)
	require.NoError(t, err)
	batch, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		require.NoError(t, batch.Close(ctx), "closing the Batcher")
	})
	// The test's own bound, far above a call's: a call that waits for a
	// migration that never ends shows as this test's failure, not a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := &migrationRun{
		t: t, ctx: ctx, rng: rand.New(rand.NewPCG(seed, 0x5107)), board: board, batch: batch,
		m:     &migrationModel{policy: policy, boards: [2]map[string]float64{{}, {}}},
		daily: lb.In(lb.Daily()),
	}
	for i := range 40 {
		r.pool = append(r.pool, fmt.Sprintf("p%02d", i))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed=%d, operations up to the failure:\n%s", seed, strings.Join(r.logged, "\n"))
		}
	})
	// A first load, so that the board's slots hold keys to split.
	r.submitMany()

	// The migrations run beside the calls until they end, a failed one's
	// too: the next subtest's board starts on a Cluster at rest.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var moved int
	var migErr error
	wg.Go(func() {
		if moved, migErr = oc.migrateWhile(name, rand.New(rand.NewPCG(seed, 0x3e)), stop); migErr != nil {
			cancel() // the calls would wait for a slot left half moved
		}
	})
	stopped := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
		if migErr != nil {
			t.Errorf("migrating the board's slots: %v", migErr)
		}
	})
	defer stopped()
	ops := []func(){r.submit, r.submit, r.submit, r.submitMany, r.set, r.remove, r.batchSubmit, r.read, r.read, r.read}
	for r.step = 1; r.step <= 200; r.step++ {
		ops[r.rng.IntN(len(ops))]()
	}
	stopped()
	t.Logf("%d slots moved during %d calls; Redis refused %d commands for them", moved, r.step-1, client.n.Load())
	// The calls met the slots split: else this test proved nothing.
	require.NotZero(t, client.n.Load(), "no command was refused while the slots moved")
	r.checkAll()
}

// refusalCounter counts the replies saying a command did not run because
// its slot was moving (TRYAGAIN, and EXECABORT for a transaction).
type refusalCounter struct {
	rueidis.Client
	n atomic.Int64
}

func (c *refusalCounter) count(res rueidis.RedisResult) {
	if e, ok := rueidis.IsRedisErr(res.Error()); ok && (e.IsTryAgain() || strings.HasPrefix(e.Error(), "EXECABORT")) {
		c.n.Add(1)
	}
}

func (c *refusalCounter) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	res := c.Client.Do(ctx, cmd)
	c.count(res)
	return res
}

func (c *refusalCounter) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	res := c.Client.DoMulti(ctx, cmds...)
	for _, r := range res {
		c.count(r)
	}
	return res
}

func (r *migrationRun) logf(format string, args ...any) {
	r.logged = append(r.logged, fmt.Sprintf("step %d: ", r.step)+fmt.Sprintf(format, args...))
}

func (r *migrationRun) score() float64 { return float64(r.rng.IntN(36) - 5) }

func (r *migrationRun) member() string { return r.pool[r.rng.IntN(len(r.pool))] }

func (r *migrationRun) submit() {
	member, score := r.member(), r.score()
	r.logf("Submit(%s, %v)", member, score)
	_, err := r.board.Submit(r.ctx, member, score)
	require.NoError(r.t, err, "step %d: Submit(%s, %v)", r.step, member, score)
	r.m.apply(0, member, score)
	r.m.apply(1, member, score)
}

func (r *migrationRun) submitMany() {
	scores := map[string]float64{}
	for range 1 + r.rng.IntN(12) {
		scores[r.member()] = r.score()
	}
	r.logf("SubmitMany(%v)", scores)
	require.NoError(r.t, r.board.SubmitMany(r.ctx, scores), "step %d: SubmitMany", r.step)
	for member, score := range scores {
		r.m.apply(0, member, score)
		r.m.apply(1, member, score)
	}
}

// set corrects a member's score in the default window (alltime).
func (r *migrationRun) set() {
	member, score := r.member(), r.score()
	r.logf("Set(%s, %v)", member, score)
	require.NoError(r.t, r.board.Set(r.ctx, member, score), "step %d: Set(%s, %v)", r.step, member, score)
	r.m.boards[0][member] = score
}

func (r *migrationRun) remove() {
	members := []string{r.member(), r.member()}
	r.logf("Remove(%v)", members)
	require.NoError(r.t, r.board.Remove(r.ctx, members...), "step %d: Remove(%v)", r.step, members)
	for _, member := range members {
		delete(r.m.boards[0], member)
		delete(r.m.boards[1], member)
	}
}

// batchSubmit submits distinct members through the Batcher at once, so
// that they share a batch.
func (r *migrationRun) batchSubmit() {
	scores := map[string]float64{}
	for range 2 + r.rng.IntN(4) {
		scores[r.member()] = r.score()
	}
	r.logf("Batcher.Submit(%v)", scores)
	var wg sync.WaitGroup
	errs := make(chan error, len(scores))
	for member, score := range scores {
		wg.Go(func() {
			if _, err := r.batch.Submit(r.ctx, member, score); err != nil {
				errs <- fmt.Errorf("Batcher.Submit(%s, %v): %w", member, score, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(r.t, err, "step %d", r.step)
	}
	for member, score := range scores {
		r.m.apply(0, member, score)
		r.m.apply(1, member, score)
	}
}

// read runs one read of a random window and compares it with the model.
func (r *migrationRun) read() {
	w := r.rng.IntN(2)
	var q []lb.Query
	if w == 1 {
		q = []lb.Query{r.daily}
	}
	all := r.m.entries(w)
	where := fmt.Sprintf("step %d window %d", r.step, w)
	switch r.rng.IntN(4) {
	case 0:
		n := 1 + r.rng.IntN(15)
		r.logf("Top(%d) window %d", n, w)
		got, err := r.board.Top(r.ctx, n, q...)
		require.NoError(r.t, err, "%s Top", where)
		require.Equal(r.t, all[:min(n, len(all))], nilIfEmpty(got), "%s Top(%d)", where, n)
	case 1:
		member := r.member()
		r.logf("Rank(%s) window %d", member, w)
		got, err := r.board.Rank(r.ctx, member, q...)
		i := slices.IndexFunc(all, func(e lb.Entry) bool { return e.Member == member })
		if i < 0 {
			require.ErrorIs(r.t, err, lb.ErrNotRanked, "%s Rank(%s)", where, member)
			return
		}
		require.NoError(r.t, err, "%s Rank(%s)", where, member)
		require.Equal(r.t, all[i], got.Entry, "%s Rank(%s)", where, member)
		require.Equal(r.t, int64(len(all)), got.Total, "%s Rank(%s) total", where, member)
	case 2:
		member, radius := r.member(), r.rng.IntN(4)
		r.logf("Around(%s, %d) window %d", member, radius, w)
		got, err := r.board.Around(r.ctx, member, radius, q...)
		pos := slices.IndexFunc(all, func(e lb.Entry) bool { return e.Member == member })
		if pos < 0 {
			require.ErrorIs(r.t, err, lb.ErrNotRanked, "%s Around(%s)", where, member)
			return
		}
		require.NoError(r.t, err, "%s Around(%s, %d)", where, member, radius)
		width := 2*radius + 1
		start := min(max(pos-radius, 0), max(0, len(all)-width))
		require.Equal(r.t, all[start:min(start+width, len(all))], got, "%s Around(%s, %d)", where, member, radius)
	default:
		number, size := 1+r.rng.IntN(3), 5+r.rng.IntN(10)
		r.logf("Page(%d, %d) window %d", number, size, w)
		got, err := r.board.Page(r.ctx, number, size, q...)
		require.NoError(r.t, err, "%s Page(%d, %d)", where, number, size)
		lo := min((number-1)*size, len(all))
		require.Equal(r.t, all[lo:min(lo+size, len(all))], nilIfEmpty(got.Entries), "%s Page(%d, %d)", where, number, size)
		require.Equal(r.t, int64(len(all)), got.Total, "%s Page(%d, %d) total", where, number, size)
	}
}

// checkAll compares every window whole with the model.
func (r *migrationRun) checkAll() {
	for w, q := range [][]lb.Query{nil, {r.daily}} {
		all := r.m.entries(w)
		got, err := r.board.Page(r.ctx, 1, 1000, q...)
		require.NoError(r.t, err, "final Page of window %d", w)
		require.Equal(r.t, all, nilIfEmpty(got.Entries), "final board, window %d", w)
	}
}

// nilIfEmpty makes an empty read compare equal to the model's empty slice.
func nilIfEmpty(es []lb.Entry) []lb.Entry {
	if len(es) == 0 {
		return []lb.Entry{}
	}
	return es
}
