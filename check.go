package leaderboard

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/redis/rueidis"
)

// CheckReport is what Check found in one window period of a sharded board:
// the findings its confirming reads kept (see Check).
// Every list is sorted by member name.
type CheckReport struct {
	// Window is the window's Name.
	Window string
	// Period is the ID of the period checked.
	Period string
	// Members is the number of members in the partitions, as Check's scan
	// read them (writes since may have changed it).
	Members int64
	// Misplaced members are in a shard their score does not belong to, and
	// not in the right one.
	Misplaced []string
	// Duplicated members are in more than one shard.
	Duplicated []string
	// Missing members are in a partition and in no shard.
	Missing []string
	// Stray members are in a shard and in no partition.
	Stray []string
	// Stale members are in the right shard with a score that differs from
	// their partition's.
	Stale []string
	// Repaired reports that repair was asked and every finding was fixed
	// (rewritten from the partitions as the repair read them); false when
	// there was none.
	Repaired bool
	// Shadow reports that the report is of the board's shadow layout
	// (WithShadowShards), which follows the report of its own layout.
	Shadow bool
}

// Clean reports whether the check found nothing.
func (r CheckReport) Clean() bool {
	return len(r.Misplaced)+len(r.Duplicated)+len(r.Missing)+len(r.Stray)+len(r.Stale) == 0
}

// Check scans a sharded board's current period of every window (or the one
// the queries pick; In restricts it to one window) and compares each shard
// with the partitions, which hold every member's stored value: members in
// the wrong shard, in two shards, in none, in a shard but in no partition,
// or with a stale score. Writes may go on meanwhile. Each period is
// checked in turn, at the cost of a Check of it alone. The scan takes many
// round trips (the partitions 256 a round trip, then each shard, a ZSCAN
// page of about 1,000 members a round trip), and a
// write landing between two of them would look like a finding, so the
// scan only names suspects, which Check reads again (their partitions and
// shards, 1,000 members a round trip) and reports only what those reads
// confirm. On one node, where each write of the board's own layout is one
// script, one MULTI reads a suspect's partition and shards at one moment,
// and a finding is what was wrong at that moment. On a Cluster a write
// takes two steps on different nodes (its partition, then its shards),
// and on one node a shadow's share is a second script after the write's,
// so no one read is a settled moment: the suspects are read again (on one
// node one MULTI a read; a Cluster's partitions, then shards, then
// partitions, a round trip each, each read after the first starting from
// the partitions the last one ended with: two reads are five round trips)
// up to four times, 50, 100 and 200 ms apart, and a member is reported
// once two reads in a row found it wrong while its partition held one
// value. A member found right at one read is not reported, nor one not so
// confirmed by the fourth read (its partition changed across the reads: it
// was being written throughout; a later Check, once its writes pause,
// tells). A Cluster Check (or one of a shadow on one node) can still report
// a write in flight at that instant: one whose first step was done before
// the first of those two reads and whose second had not landed by the
// second, 50 ms or more later (a slow or failing node's); run Check again
// before acting on a finding there. With repair, it rewrites the findings
// from the partitions as they are then (on a single node in one script,
// atomically; on a Cluster in a write's two steps, their partitions, then
// the shards, a round trip each), with Stray findings after one round
// trip more, which looks for an older version's partitions: it refuses
// with an error to empty a period whose members are all in partitions
// under an older version's keys (README, "Upgrading a sharded board"). A
// board moving to new bounds (WithShadowShards) has its shadow layout
// checked too, as the board's is, by a scan of its own (the partitions
// again, then the shadow's shards): each window's report of the shadow
// (CheckReport.Shadow) follows the board's.
// It reads whole shards, so run it from maintenance jobs and tests, not on
// a request path. A period past its retention (At) returns ErrExpired, as
// a read At it does, before any period is scanned, and so does one whose
// retention ends while it is scanned (Redis may have expired its keys part
// way); otherwise, on an unsharded board, Check returns ErrInvalidArgument.
func (lb *Leaderboard) Check(ctx context.Context, repair bool, q ...Query) (_ []CheckReport, err error) {
	defer endedWith(ctx, &err)
	qq, err := parseQueries(q)
	if err != nil {
		return nil, err
	}
	windows := lb.windows
	if qq.window != nil {
		w, err := lb.window(qq.window)
		if err != nil {
			return nil, err
		}
		windows = []Window{w}
	}
	now := lb.now()
	at := qq.at
	if at.IsZero() {
		at = now
	}
	// Every period first: one past its retention is refused as a read At
	// it is (its keys are gone, or going, and a repair would write into
	// them), before any is scanned.
	tgs := make([]target, len(windows))
	for i, w := range windows {
		tg, err := lb.target(w, at)
		if err != nil {
			return nil, err
		}
		if err := expiredAt(tg, now); err != nil {
			return nil, err
		}
		tgs[i] = tg
	}
	if len(lb.bounds) == 0 {
		return nil, errCheckUnsharded // bad input first, before ctx
	}
	if err := notStarted(ctx, "check"); err != nil {
		return nil, err
	}
	var out []CheckReport
	for _, tg := range tgs {
		rs, err := lb.be.check(ctx, tg, repair)
		// A retention that ended as the period was scanned: Redis may
		// have expired its keys part way, which would show as findings
		// on a sound board.
		if gone := expiredAt(tg, lb.now()); gone != nil {
			return nil, gone
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

func (lb *shardedBackend) check(ctx context.Context, tg target, repair bool) ([]CheckReport, error) {
	r, err := lb.checkLayout(ctx, tg, repair)
	switch {
	case err == nil && r.Repaired:
		// The repair may have changed the top. A failed delete is tried
		// once more, even when ctx has ended (hotLost).
		if err = lb.dropHot(ctx, []target{tg}); err != nil {
			lb.hotLost(ctx, []target{tg})
			err = wrap("check", err)
		}
	case err != nil && repair:
		lb.hotFailed(ctx, []target{tg}, err) // a part of the repair may have applied
	}
	if err != nil || lb.shadow == nil {
		return []CheckReport{r}, err
	}
	s, err := lb.shadow.checkLayout(ctx, tg, repair)
	s.Shadow = true
	return []CheckReport{r, s}, err
}

// checkLayout checks this layout's shards of tg against the partitions:
// a scan of the whole period finds the suspects, and confirmSuspects
// reads them again, so that a write landing between the scan's reads
// (which take many round trips) is not reported.
func (lb *shardedBackend) checkLayout(ctx context.Context, tg target, repair bool) (CheckReport, error) {
	r := CheckReport{Window: tg.window.Name(), Period: tg.period.ID}
	truth, err := lb.partitions(ctx, tg)
	if err != nil {
		return r, err
	}
	r.Members = int64(len(truth))
	where, found, err := lb.scanShards(ctx, tg)
	if err != nil {
		return r, err
	}
	suspects := slices.Sorted(maps.Keys(lb.findings(truth, where, found)))
	fs, where, err := lb.confirmSuspects(ctx, tg, suspects)
	if err != nil {
		return r, err
	}
	bad := r.file(fs)
	if !repair || len(bad) == 0 {
		return r, nil
	}
	if len(r.Stray) > 0 {
		// Also with members under this version's partitions: in a rolling
		// upgrade the first new write puts one there.
		if err := lb.refuseLegacy(ctx, tg, len(r.Stray)); err != nil {
			return r, err
		}
	}
	if err := lb.repairShards(ctx, tg, bad, where); err != nil {
		return r, wrap("check", err)
	}
	r.Repaired = true
	return r, nil
}

// scanShards reads every shard of tg whole: the shards holding each
// member, and its value in each (in the same order).
func (lb *shardedBackend) scanShards(ctx context.Context, tg target) (where map[string][]int, found map[string][]string, err error) {
	where, found = map[string][]int{}, map[string][]string{}
	for i := 0; i <= len(lb.bounds); i++ {
		zs, err := lb.scanSet(ctx, lb.shardKey(i, tg))
		if err != nil {
			return nil, nil, err
		}
		for m, v := range zs {
			where[m] = append(where[m], i)
			found[m] = append(found[m], v)
		}
	}
	return where, found, nil
}

// refuseLegacy is the error of a repair that would remove strays from a
// period's shards, when the period's partitions under the layout before
// partitions shared tags (keys.Board.LegacyPartitions) hold members: a
// board written by an older version and not yet moved (README, "Upgrading
// a sharded board", whose last step deletes those keys), whose shards are
// the only copy of its members left under the keys this version reads,
// also when this version has written some of its own since. Strays
// without such keys (a crashed write's leftovers, a period emptied by a
// Reset that writes straddled) are repaired.
func (lb *shardedBackend) refuseLegacy(ctx context.Context, tg target, strays int) error {
	old := lb.keys.LegacyPartitions()
	ks := make([]string, len(old))
	for i, p := range old {
		ks[i] = p.Period(tg.window.Name(), tg.period.ID)
	}
	// On one node one EXISTS of them all; on a Cluster one a key (each in
	// a slot of its own).
	var cmds rueidis.Commands
	if lb.cluster {
		for _, k := range ks {
			cmds = append(cmds, lb.client.B().Exists().Key(k).Build())
		}
	} else {
		cmds = rueidis.Commands{lb.client.B().Exists().Key(ks...).Build()}
	}
	for _, r := range lb.fromPrimaries(ctx, cmds) {
		n, err := r.AsInt64()
		if err != nil {
			return wrap("check", err)
		}
		if n > 0 {
			return fmt.Errorf("leaderboard: check: %s %s: not repaired: %d members are in the shards and not in this version's partitions, and partitions under the keys of an older version are there; a repair would remove them (move the board first: README, \"Upgrading a sharded board\")",
				tg.window.Name(), tg.period.ID, strays)
		}
	}
	return nil
}

// finding is what Check found wrong with one member.
type finding int

const (
	misplaced finding = iota + 1
	duplicated
	missing
	stray
	stale
)

// findings compares the shards (where, found: as scanShards returns them)
// with the partitions (truth) and returns every member they disagree on.
func (lb *shardedBackend) findings(truth map[string]string, where map[string][]int, found map[string][]string) map[string]finding {
	fs := map[string]finding{}
	for m, v := range truth {
		in := where[m]
		switch {
		case len(in) == 0:
			fs[m] = missing
		case len(in) > 1:
			fs[m] = duplicated
		case in[0] != lb.shardOfString(v):
			fs[m] = misplaced
		case !sameValue(found[m][0], v):
			fs[m] = stale
		}
	}
	for m := range where {
		if _, ok := truth[m]; !ok {
			fs[m] = stray
		}
	}
	return fs
}

// file files fs into r's lists, each sorted, and returns their members
// sorted.
func (r *CheckReport) file(fs map[string]finding) []string {
	lists := map[finding]*[]string{misplaced: &r.Misplaced, duplicated: &r.Duplicated, missing: &r.Missing, stray: &r.Stray, stale: &r.Stale}
	bad := slices.Sorted(maps.Keys(fs))
	for _, m := range bad {
		l := lists[fs[m]]
		*l = append(*l, m)
	}
	return bad
}

// repairShards rewrites members in every shard from their partitions: on
// one node in one script (shard_local_many.lua), which sweeps every shard;
// on a Cluster see repairCluster (where nil: not known).
func (lb *shardedBackend) repairShards(ctx context.Context, tg target, members []string, where map[string][]int) error {
	if !lb.cluster {
		return lb.manyLocal(ctx, "repair", []target{tg}, members, nil, 0)
	}
	return lb.repairCluster(ctx, tg, members, where, true)
}

// repairCluster gives members new versions in their partitions first, so
// that the repairs win over any write still in flight, then puts each into
// its right shard and deletes it from every other shard that holds a copy
// (where, as Check found them). With where nil, not known (a write redone
// as late), it sweeps every other shard instead, after the puts (a sweep
// that finds no copy is never late, and writes nothing). redo is
// writeShards'.
func (lb *shardedBackend) repairCluster(ctx context.Context, tg target, members []string, where map[string][]int, redo bool) error {
	rows, err := lb.partWrite(ctx, "touch", []target{tg}, members, nil, 0)
	if err != nil {
		return err
	}
	ops := make([][]shardOp, len(lb.bounds)+1)
	var sweeps [][]shardOp
	if where == nil {
		sweeps = make([][]shardOp, len(ops))
	}
	for j, m := range members {
		row := rows[0][j]
		right := -1
		if row.had {
			right = lb.shardOfString(row.now)
			ops[right] = append(ops[right], shardOp{op: "put", member: m, version: row.version, value: row.now})
		}
		if sweeps != nil {
			sweepOthers(sweeps, m, row.version, right)
		}
		for _, i := range where[m] {
			if i != right {
				ops[i] = append(ops[i], shardOp{op: "del", member: m, version: row.version})
			}
		}
	}
	var b shardBatch
	b.add(lb, 0, tg, ops)
	b.add(lb, 0, tg, sweeps)
	return lb.writeShards(ctx, []target{tg}, b, redo)
}

// errCheckUnsharded is Check's answer on an unsharded board.
var errCheckUnsharded = fmt.Errorf("%w: Check needs a sharded board (WithShards)", ErrInvalidArgument)

// sameValue compares two stored values as numbers: Redis and Lua may print
// the same double differently.
func sameValue(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// partitions reads every member's stored value from the period's
// partitions, 256 HGETALLs a round trip (a partition holds a few hundred
// members at most, Partitions being sized for it). Check reads from the
// primaries (fromPrimaries): a replica's partitions and shards may trail
// theirs, and differ from each other, where a repair writes the
// primaries' (a clean Check after FillShadow says the shadow is ready).
func (lb *shardedBackend) partitions(ctx context.Context, tg target) (map[string]string, error) {
	truth := map[string]string{}
	for first := 0; first < lb.parts.Len(); first += 256 {
		cmds := make(rueidis.Commands, 0, 256)
		for p := first; p < min(first+256, lb.parts.Len()); p++ {
			cmds = append(cmds, lb.client.B().Hgetall().Key(lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID)).Build())
		}
		for _, r := range lb.fromPrimaries(ctx, cmds) {
			m, err := r.AsStrMap()
			if err != nil {
				return nil, wrap("check", err)
			}
			maps.Copy(truth, m)
		}
	}
	return truth, nil
}

// scanSet reads a whole sorted set, member -> stored value, with ZSCAN.
func (lb *shardedBackend) scanSet(ctx context.Context, key string) (map[string]string, error) {
	return lb.scanPairs(ctx, func(cursor uint64) rueidis.Completed {
		return lb.client.B().Zscan().Key(key).Cursor(cursor).Count(1000).Build()
	})
}

// scanPairs runs a SCAN-style command to the end, collecting its flat
// name, value, name, value replies.
func (lb *shardedBackend) scanPairs(ctx context.Context, cmd func(cursor uint64) rueidis.Completed) (map[string]string, error) {
	out := map[string]string{}
	var cursor uint64
	for {
		e, err := lb.fromPrimaries(ctx, rueidis.Commands{cmd(cursor)})[0].AsScanEntry()
		if err != nil {
			return nil, wrap("check", err)
		}
		for i := 0; i+1 < len(e.Elements); i += 2 {
			out[e.Elements[i]] = e.Elements[i+1]
		}
		if e.Cursor == 0 {
			return out, nil
		}
		cursor = e.Cursor
	}
}
