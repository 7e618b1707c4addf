// Package scripts holds the leaderboard's Lua scripts, embedded at build time
// and wrapped once in rueidis.Lua values, which run them with EVALSHA and fall
// back to EVAL only the first time a server lacks them.
//
// Every script takes all its keys through KEYS, so Redis Cluster routes it by
// the board's hash tag, and returns scores as strings, since Redis truncates
// Lua numbers in replies to integers. Each one is common.lua, then the
// libraries it uses (less the functions it never calls: see shake), then
// its own file. Every script's arguments open with
// one Header, which common.lua reads in one place; each script has one typed
// builder (SubmitCall, RankCall, ...) that puts its own arguments after it,
// so no caller counts argument positions.
package scripts

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"slices"

	"github.com/redis/rueidis"
)

var (
	//go:embed common.lua
	common string
	//go:embed order.lua
	order string
	//go:embed ranks.lua
	ranks string
	//go:embed versions.lua
	versions string
	//go:embed writes.lua
	writes string
	//go:embed shardwrites.lua
	shardWrites string
	//go:embed shardof.lua
	shardOf string
	//go:embed shardplace.lua
	shardPlace string
	//go:embed shardstanding.lua
	shardStanding string
	//go:embed submit.lua
	submitSrc string
	//go:embed many.lua
	manySrc string
	//go:embed rank.lua
	rankSrc string
	//go:embed range.lua
	rangeSrc string
	//go:embed part_write.lua
	partWriteSrc string
	//go:embed shard_write.lua
	shardWriteSrc string
	//go:embed first_better.lua
	firstBetterSrc string
	//go:embed shard_read.lua
	shardReadSrc string
	//go:embed shard_local.lua
	shardLocalSrc string
	//go:embed shard_batch.lua
	shardBatchSrc string
	//go:embed shard_local_many.lua
	shardLocalManySrc string
	//go:embed shard_locate.lua
	shardLocateSrc string
	//go:embed shardslice.lua
	shardSlice string
	//go:embed shard_page.lua
	shardPageSrc string
	//go:embed remove_between.lua
	removeBetweenSrc string
	//go:embed remove.lua
	removeSrc string
	//go:embed mirror.lua
	mirror string
	//go:embed batchwrite.lua
	batchWrite string
	//go:embed hot_top.lua
	hotTopSrc string
	//go:embed hot_put.lua
	hotPutSrc string
	//go:embed top_data.lua
	topDataSrc string
	//go:embed batch.lua
	batchSrc string
	//go:embed primary_read.lua
	primaryReadSrc string
)

var (
	// Submit applies one submission to every window; see submit.lua.
	Submit = newScript(submitSrc, order, ranks, writes)
	// Many applies a batch of submissions to every window; see many.lua.
	Many = newScript(manySrc, writes)
	// Batch applies a Batcher's folded submissions, each reporting its
	// standings; see batch.lua.
	Batch = newScript(batchSrc, order, ranks, writes, batchWrite)
	// Rank reads a competition standing; see rank.lua.
	Rank = newReadScript(rankSrc, order)
	// Range reads a slice around a member or a competition page; see range.lua.
	Range = newReadScript(rangeSrc, order)
	// PartWrite applies writes to partitions of one group of a sharded
	// board on a Cluster; see part_write.lua.
	PartWrite = newScript(partWriteSrc, versions, writes, shardWrites)
	// ShardWrite applies versioned writes to one shard on a Cluster; see
	// shard_write.lua.
	ShardWrite = newScript(shardWriteSrc, order, ranks, versions, shardWrites)
	// FirstBetter counts the members strictly better than the entry at a
	// position; see first_better.lua.
	FirstBetter = newReadScript(firstBetterSrc, order)
	// ShardRead reads one shard with the members strictly better than a
	// score; see shard_read.lua.
	ShardRead = newReadScript(shardReadSrc, order)
	// ShardLocal submits to a sharded board on one node; see shard_local.lua.
	ShardLocal = newScript(shardLocalSrc, order, ranks, writes, shardWrites, shardOf, shardPlace, shardStanding)
	// ShardBatch applies a Batcher's folded submissions to a sharded board
	// on one node; see shard_batch.lua.
	ShardBatch = newScript(shardBatchSrc, order, ranks, writes, shardWrites, shardOf, shardPlace, shardStanding, batchWrite)
	// ShardLocalMany applies SubmitMany, Remove or Check's repairs to a
	// sharded board on one node; see shard_local_many.lua.
	ShardLocalMany = newScript(shardLocalManySrc, writes, shardWrites, shardOf, shardPlace)
	// ShardLocate finds a member on a sharded board on one node; see
	// shard_locate.lua.
	ShardLocate = newReadScript(shardLocateSrc, order, ranks, shardOf, shardSlice)
	// ShardPage reads a page across the shards of a board on one node.
	ShardPage = newReadScript(shardPageSrc, order, shardSlice)
	// RemoveBetween removes one chunk of a score range from an unsharded
	// board; see remove_between.lua.
	RemoveBetween = newScript(removeBetweenSrc)
	// Remove removes members from the many periods of an unsharded board
	// whose MULTI would be too long; see remove.lua.
	Remove = newScript(removeSrc)
	// HotTop rewrites a period's top mirror; see hot_top.lua.
	HotTop = newScript(hotTopSrc, order, mirror)
	// HotPut puts a sharded Cluster board's top mirror, read by the
	// client, unless its turn has passed; see hot_put.lua.
	HotPut = newScript(hotPutSrc, mirror)
	// TopData reads Top with IncludeData; see top_data.lua.
	TopData = newReadScript(topDataSrc)
	// PrimaryRead runs reads of one slot on the primary, always as
	// EVALSHA (a write script to the client's routing, so never sent to
	// a replica); see primary_read.lua.
	PrimaryRead = newScript(primaryReadSrc)
)

// Script is one embedded script.
type Script struct {
	src string
	sha string
	lua *rueidis.Lua
	// read is true for a script that writes nothing: a call whose header
	// asks (Header.ReadOnly) runs it as EVALSHA_RO (through ro), which a
	// client may send to a replica.
	read bool
	ro   *rueidis.Lua
}

// newReadScript is newScript of a script that writes nothing.
func newReadScript(body string, libs ...string) *Script {
	s := newScript(body, libs...)
	s.read, s.ro = true, rueidis.NewLuaScriptReadOnly(s.src)
	return s
}

// newScript is common.lua, then the libraries the script uses (order.lua,
// ranks.lua, versions.lua, writes.lua, shardwrites.lua, shardof.lua,
// shardplace.lua, shardstanding.lua, shardslice.lua, mirror.lua,
// batchwrite.lua, in that order), then the script's own file, without
// the library functions it never calls (see shake).
func newScript(body string, libs ...string) *Script {
	src := shake(append([]string{common}, libs...), body)
	sum := sha1.Sum([]byte(src))
	return &Script{src: src, sha: hex.EncodeToString(sum[:]), lua: rueidis.NewLuaScript(src)}
}

// Call is one script run (or, with Script nil, one plain command) in a
// pipeline of calls to several slots.
type Call struct {
	Script *Script
	Keys   []string
	Args   []string
	// ReadOnly runs the script as EVALSHA_RO (EVAL_RO when the server
	// lacks it): only for a read script, whose header asked.
	ReadOnly bool
	// Cmd builds the plain command when Script is nil. It is a function
	// because a built command is recycled once sent, and a call may be sent
	// twice (see ExecMulti).
	Cmd func() rueidis.Completed
	// Follows marks a call that must come after what the calls before it
	// on its node write (a shadow layout's repair, copying the partitions
	// a write just wrote; a top mirror's rewrite or delete): when one of
	// those ran after it, because the server had to load its script, or
	// refused it before running it and the board's client sent it again
	// (see ExecMulti), it runs again after that. It must be safe to run
	// twice, and is a command of its own, never in a MULTI.
	Follows bool
}

// ExecMulti runs calls in one DoMulti, which rueidis fans out to the nodes
// that own their slots, in parallel. Scripts run by EVALSHA; those a node
// does not have yet are sent again with EVAL in one more DoMulti, which
// happens once per script and node, with the calls after the first of them
// that follow it (Follows), in their order. A client that sends again what
// Redis refused before running it (Resender) is told which calls follow,
// and sends those after the first command it sends again with it, in
// their order (see DoMulti). No calls make no round trip.
func ExecMulti(ctx context.Context, c rueidis.Client, calls []Call) []rueidis.RedisResult {
	if len(calls) == 0 {
		return nil
	}
	cmds := make(rueidis.Commands, len(calls))
	var follows []bool // nil when none follows
	for i, call := range calls {
		cmds[i] = call.build(c, false)
		if call.Follows {
			if follows == nil {
				follows = make([]bool, len(calls))
			}
			follows[i] = true
		}
	}
	res := DoMulti(ctx, c, follows, cmds...)
	again := noScript(calls, res)
	if len(again) == 0 {
		return res
	}
	// A follower ran before the write it reads was loaded and run: it runs
	// again, after it (again in call order).
	again = WithFollowers(again, follows)
	cmds = cmds[:0]
	var next []bool
	for _, i := range again {
		cmds = append(cmds, calls[i].build(c, true))
		if follows != nil {
			next = append(next, follows[i])
		}
	}
	for j, r := range DoMulti(ctx, c, next, cmds...) {
		res[again[j]] = r
	}
	return res
}

// noScript lists, in order, the calls whose script the server lacked.
func noScript(calls []Call, res []rueidis.RedisResult) []int {
	var again []int
	for i, r := range res {
		if calls[i].Script == nil {
			continue
		}
		if err, ok := rueidis.IsRedisErr(r.Error()); ok && err.IsNoScript() {
			again = append(again, i)
		}
	}
	return again
}

// Resender is a client that sends again, in one more DoMulti, the
// commands of a DoMulti that Redis refused before running them (the
// board's client, and a client that wraps it and passes the flags on).
// DoMultiFollows is its DoMulti told which of cmds follow (follows[i],
// from Call.Follows): when it sends commands again, it sends with them
// those that follow after the first of them (WithFollowers), which had
// run before it.
type Resender interface {
	DoMultiFollows(ctx context.Context, follows []bool, cmds ...rueidis.Completed) []rueidis.RedisResult
}

// DoMulti is c.DoMulti(ctx, cmds...), through DoMultiFollows when c is a
// Resender and some of cmds follow (follows[i]; follows nil: none). A
// client that wraps a Resender must be one too: through its DoMulti a
// follower runs once, before a write sent again.
func DoMulti(ctx context.Context, c rueidis.Client, follows []bool, cmds ...rueidis.Completed) []rueidis.RedisResult {
	if r, ok := c.(Resender); ok && slices.Contains(follows, true) {
		return r.DoMultiFollows(ctx, follows, cmds...)
	}
	return c.DoMulti(ctx, cmds...)
}

// WithFollowers is again, the commands of a DoMulti (their indices,
// ascending) to send again as they ran too early or not at all, with
// those after the first of them that follow (follows[i]; follows nil:
// none), ascending: sent again in that order, each follower runs after
// what came before it on its node.
func WithFollowers(again []int, follows []bool) []int {
	if len(again) == 0 {
		return again
	}
	for i := again[0] + 1; i < len(follows); i++ {
		if follows[i] && !slices.Contains(again, i) {
			again = append(again, i)
		}
	}
	slices.Sort(again)
	return again
}

// ExecTx runs calls, plain commands and scripts whose keys share one slot,
// in one MULTI/EXEC, so that a script that needs only a little of what the
// transaction reads (a count that depends on a stored score) runs beside
// plain commands whose replies never pass through Lua. It returns
// DoMulti's results: MULTI's, a QUEUED a call, then EXEC's. A script the
// server does not have yet fails inside EXEC with NOSCRIPT (the other
// commands ran, and a transaction of reads did no harm): the transaction
// is sent again once with EVAL for it, a second round trip once per
// script and node.
func ExecTx(ctx context.Context, c rueidis.Client, calls []Call) []rueidis.RedisResult {
	res := c.DoMulti(ctx, txCmds(c, calls, false)...)
	exec, err := res[len(res)-1].ToArray()
	if err != nil || len(exec) != len(calls) {
		return res
	}
	for i := range exec {
		if e, ok := rueidis.IsRedisErr(exec[i].Error()); ok && e.IsNoScript() && calls[i].Script != nil {
			return c.DoMulti(ctx, txCmds(c, calls, true)...)
		}
	}
	return res
}

// txCmds is calls between MULTI and EXEC, the scripts by EVAL when eval.
func txCmds(c rueidis.Client, calls []Call, eval bool) rueidis.Commands {
	cmds := make(rueidis.Commands, 0, len(calls)+2)
	cmds = append(cmds, c.B().Multi().Build())
	for _, call := range calls {
		cmds = append(cmds, call.build(c, eval))
	}
	return append(cmds, c.B().Exec().Build())
}

func (call Call) build(c rueidis.Client, eval bool) rueidis.Completed {
	s := call.Script
	n := int64(len(call.Keys))
	switch {
	case s == nil:
		return call.Cmd()
	case call.ReadOnly && eval:
		return c.B().EvalRo().Script(s.src).Numkeys(n).Key(call.Keys...).Arg(call.Args...).Build()
	case call.ReadOnly:
		return c.B().EvalshaRo().Sha1(s.sha).Numkeys(n).Key(call.Keys...).Arg(call.Args...).Build()
	case eval:
		return c.B().Eval().Script(s.src).Numkeys(n).Key(call.Keys...).Arg(call.Args...).Build()
	}
	return c.B().Evalsha().Sha1(s.sha).Numkeys(n).Key(call.Keys...).Arg(call.Args...).Build()
}
