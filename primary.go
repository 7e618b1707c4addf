package leaderboard

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// The reads a write takes its input from (the members RemoveBetween
// removes, the partitions FillShadow copies, the standings Seal seals,
// the shards a sharded hot top's mirror is put from) read where writes go, the primaries, even
// with a client that sends read-only commands to replicas
// (WithReplicaReads): a replica trails its primary, and a write built on
// its answer would miss what was written moments before, for good (a
// member left in a range RemoveBetween returned having emptied, a shadow
// without it), where a read's own staleness ends when the replica catches
// up.

// fromPrimaries runs cmds, each a read of one key, in one round trip, on
// the primaries whatever the client's SendToReplicas says: with
// WithReplicaReads in MULTIs of their own (one a run of reads in one
// slot), which rueidis sends to the primary, from goroutines at once (a
// Cluster's DoMulti takes one slot's MULTI at most; see primaryOnly);
// over Redis's maxmemory, which refuses them, in one round trip more, by
// script.
func (lb *Leaderboard) fromPrimaries(ctx context.Context, cmds rueidis.Commands) []rueidis.RedisResult {
	return lb.primaryClient().DoMulti(ctx, cmds...)
}

// membersBetween reads the members of the best n entries of one sorted
// set within r, from its primary, and whether the set may hold more.
func (lb *plainBackend) membersBetween(ctx context.Context, tg target, r scoreRange, n int) ([]string, bool, error) {
	// One entry more than asked says whether more are left: a range of
	// exactly n costs no read that finds none.
	res := lb.fromPrimaries(ctx, rueidis.Commands{lb.betweenInCmd(tg.key, r, n+1)})
	es, err := lb.zEntries(&res[0])
	if err != nil {
		return nil, false, err
	}
	return firstMembers(es, n)
}

// membersBetween reads the members of the best n entries within r: the
// first n+1 within r of each shard r spans, from the primaries, in one
// round trip, best shard first; a member found in two shards (a crash
// between a move's steps) counts once. It reports whether the range
// holds more than the n it returns.
func (lb *shardedBackend) membersBetween(ctx context.Context, tg target, r scoreRange, n int) ([]string, bool, error) {
	sk := lb.periodShardKeys(tg)
	lo, hi := lb.spans(r)
	var keys []string
	for _, i := range lb.bestFirst {
		if i >= lo && i <= hi {
			keys = append(keys, sk[i])
		}
	}
	es, err := lb.entriesBetween(ctx, keys, r, n+1)
	if err != nil {
		return nil, false, err
	}
	return firstMembers(es, n)
}

// entriesBetween reads the best n entries within r of each of keys, from
// the primaries, in one round trip.
func (lb *shardedBackend) entriesBetween(ctx context.Context, keys []string, r scoreRange, n int) ([]Entry, error) {
	cmds := make(rueidis.Commands, len(keys))
	for k, key := range keys {
		cmds[k] = lb.betweenInCmd(key, r, n)
	}
	var es []Entry
	for _, res := range lb.fromPrimaries(ctx, cmds) {
		got, err := lb.zEntries(&res)
		if err != nil {
			return nil, err
		}
		es = append(es, got...)
	}
	return es, nil
}

// firstMembers is the members of es (in board order, a member perhaps
// twice) once each, the first n of them, and whether there were more.
func firstMembers(es []Entry, n int) ([]string, bool, error) {
	members := make([]string, 0, len(es))
	for _, e := range es {
		members = append(members, e.Member)
	}
	members = distinct(members)
	if len(members) > n {
		return members[:n], true, nil
	}
	return members, false, nil
}

// primaryClient is the client whose reads reach the primaries: with
// WithReplicaReads primaryOnly, else the board's client. fromPrimaries
// sends through it, and so does a write's round trip that also reads what
// the write answers with (a sharded Cluster Submit's second step counts
// the other shards and looks for the member's copies there), so that
// those reads see the write, as the script beside them does.
func (lb *Leaderboard) primaryClient() rueidis.Client {
	if !lb.replicaReads {
		return lb.client
	}
	return primaryOnly{lb.client}
}

// primaryView is the board as a write built on its reads sees it (Seal's
// standings, what Verify compares, a repaired member's fresh standing):
// with WithReplicaReads or WithHotTop, a board of the same configuration
// whose every read reaches the primaries (primaryClient) and the periods
// themselves, not the hot top's mirror, which can trail a write by up to
// its 10 seconds (one from a process without WithHotTop, one whose mirror
// delete failed); else the board itself.
func (lb *Leaderboard) primaryView() *Leaderboard {
	if !lb.replicaReads && lb.hot == nil {
		return lb
	}
	c := lb.cfg
	c.replicaReads, c.hotTop = false, 0
	return build(lb.primaryClient(), lb.name, c)
}

// primaryOnly sends every read-only command to the primary, whatever the
// client's SendToReplicas says: a read in a MULTI (a transaction always
// goes there; one a run of reads in one slot), a read-only script as the
// same call of a script that may write (onPrimary); a transaction the
// caller sends, and every other command, goes as it is, with the
// followers among them told to the board's client (DoMultiFollows).
type primaryOnly struct{ rueidis.Client }

// The board's client and primaryOnly, which wraps it, take a DoMulti's
// followers (scripts.Call.Follows): scripts.DoMulti through a wrapper
// without DoMultiFollows falls back to its DoMulti, and a follower would
// run once, before a write of its own that Redis refused and the board's
// client sent again (TestClientWrappersTakeFollowers checks that every
// wrapper has it).
var (
	_ scripts.Resender = resending{}
	_ scripts.Resender = primaryOnly{}
)

func (c primaryOnly) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	switch {
	case !cmd.IsReadOnly():
		return c.Client.Do(ctx, cmd)
	case roScript(cmd):
		return c.Client.Do(ctx, c.onPrimary(cmd))
	}
	return c.inTx(ctx, cmd)[0]
}

// inTx runs reads of one slot in a MULTI of their own and gives their
// replies, each its own: a read that fails (WRONGTYPE) fails alone. Over
// its maxmemory the primary refuses the MULTI whole (every command queued
// in it, reads too): the reads are then taken again by script (byScript),
// one round trip more, only while Redis is full.
func (c primaryOnly) inTx(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	b := c.B()
	multi := make(rueidis.Commands, 0, len(cmds)+2)
	multi = append(multi, b.Multi().Build())
	for _, cmd := range cmds {
		// Pinned: not recycled once sent, so that byScript can read
		// its arguments after the MULTI.
		multi = append(multi, cmd.Pin())
	}
	multi = append(multi, b.Exec().Build())
	res := c.Client.DoMulti(ctx, multi...)
	var err error
	for _, r := range res[:len(res)-1] {
		if err = r.Error(); err != nil {
			break
		}
	}
	if isOOM(err) && keyReads(cmds) {
		return c.byScript(ctx, cmds)
	}
	var replies []rueidis.RedisMessage
	if err == nil {
		replies, err = res[len(res)-1].ToArray()
	}
	if err == nil && len(replies) != len(cmds) {
		err = fmt.Errorf("transaction: %d replies for %d reads", len(replies), len(cmds))
	}
	out := make([]rueidis.RedisResult, len(cmds))
	for i := range out {
		if err != nil {
			out[i] = rueidis.NewErrorResult(err)
		} else {
			out[i] = rueidis.NewResult(replies[i], nil)
		}
	}
	return out
}

// byScript runs cmds, reads of one key each in one slot, by
// primary_read.lua, sent as EVALSHA, which a client sends to the primary
// and Redis runs while it refuses a MULTI (over its maxmemory): in one
// round trip, atomically, each read's reply its own.
func (c primaryOnly) byScript(ctx context.Context, cmds []rueidis.Completed) []rueidis.RedisResult {
	reads := make([][]string, len(cmds))
	for i, cmd := range cmds {
		reads[i] = cmd.Commands()
	}
	out := make([]rueidis.RedisResult, len(cmds))
	replies, err := scripts.ExecMulti(ctx, c.Client, []scripts.Call{scripts.PrimaryReadCall(reads)})[0].ToArray()
	if err == nil && len(replies) != len(cmds) {
		err = fmt.Errorf("primary read: %d replies for %d reads", len(replies), len(cmds))
	}
	for i := range out {
		if err != nil {
			out[i] = rueidis.NewErrorResult(err)
		} else {
			out[i] = rueidis.NewResult(replies[i], nil)
		}
	}
	return out
}

// keyReads reports whether cmds are all plain reads of one key, named
// first (ZRANGE, ZSCORE, ZSCAN, EXISTS, ...), which byScript can run.
func keyReads(cmds []rueidis.Completed) bool {
	for _, cmd := range cmds {
		if len(cmd.Commands()) < 2 || roScript(cmd) {
			return false
		}
	}
	return true
}

// roScript reports whether cmd runs a script read-only (EVALSHA_RO,
// EVAL_RO), which a client may send to a replica.
func roScript(cmd rueidis.Completed) bool {
	name := cmd.Commands()[0]
	return name == "EVALSHA_RO" || name == "EVAL_RO"
}

// onPrimary is cmd, a read-only script call, as the same call of a script
// that may write (EVALSHA, EVAL), which a client sends to the primary: a
// script is atomic alone, and unlike a MULTI around it Redis runs it over
// its maxmemory.
func (c primaryOnly) onPrimary(cmd rueidis.Completed) rueidis.Completed {
	args := cmd.Commands()
	n, err := strconv.Atoi(args[2])
	if err != nil || n < 0 || 3+n > len(args) {
		return cmd // not a script call rueidis built; Redis answers it
	}
	b := c.B()
	keys, rest := args[3:3+n], args[3+n:]
	if args[0] == "EVALSHA_RO" {
		return b.Evalsha().Sha1(args[1]).Numkeys(int64(n)).Key(keys...).Arg(rest...).Build()
	}
	return b.Eval().Script(args[1]).Numkeys(int64(n)).Key(keys...).Arg(rest...).Build()
}

// DoMulti sends the caller's transactions and its other writes as they
// are, in one DoMulti, and the reads outside a transaction in a MULTI a
// run of them in one slot (a shard's count and score read side by side
// share one), all at once: a read may run before a write of the same call
// (a caller reads other keys than it writes); the replies come back in
// the commands' order.
func (c primaryOnly) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	return c.DoMultiFollows(ctx, nil, cmds...)
}

// DoMultiFollows is DoMulti, told which of cmds follow what came before
// them on their node (follows[i]; nil: none; see scripts.Call.Follows):
// the writes it sends as they are go through scripts.DoMulti with their
// own flags, so that the board's client (resending) sends a follower
// again after a write before it that Redis refused and it sent again,
// as without WithReplicaReads. A follower is a write (a mirror's rewrite
// or delete, a shadow's repair); the reads taken aside follow nothing.
// So is scripts.ExecMulti's DoMulti sent (scripts.Resender).
func (c primaryOnly) DoMultiFollows(ctx context.Context, follows []bool, cmds ...rueidis.Completed) []rueidis.RedisResult {
	out := make([]rueidis.RedisResult, len(cmds))
	var rest rueidis.Commands
	var at []int // where each of rest goes in out
	var wg sync.WaitGroup
	inTx := false
	for i := 0; i < len(cmds); i++ {
		cmd := cmds[i]
		name := cmd.Commands()[0]
		switch {
		case name == "MULTI":
			inTx = true
		case name == "EXEC" || name == "DISCARD":
			inTx = false
			rest, at = append(rest, cmd), append(at, i)
			continue
		}
		if !inTx && roScript(cmd) {
			cmd = c.onPrimary(cmd)
		}
		if inTx || !cmd.IsReadOnly() {
			rest, at = append(rest, cmd), append(at, i)
			continue
		}
		j := i + 1 // the run of reads in cmd's slot
		for j < len(cmds) && cmds[j].IsReadOnly() && !roScript(cmds[j]) && cmds[j].Slot() == cmd.Slot() && cmds[j].Commands()[0] != "MULTI" {
			j++
		}
		run, first := cmds[i:j], i
		wg.Go(func() { copy(out[first:], c.inTx(ctx, run...)) })
		i = j - 1
	}
	if len(rest) > 0 {
		for k, r := range scripts.DoMulti(ctx, c.Client, restFollows(follows, at), rest...) {
			out[at[k]] = r
		}
	}
	wg.Wait()
	return out
}

// restFollows is follows (of a DoMulti's commands) for those of them at
// at, in their order: which of the commands primaryOnly sends as they are
// follow; nil when none does.
func restFollows(follows []bool, at []int) []bool {
	if follows == nil {
		return nil
	}
	out := make([]bool, len(at))
	for k, i := range at {
		out[k] = follows[i]
	}
	return out
}
