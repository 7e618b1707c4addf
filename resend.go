package leaderboard

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// resending is the board's client (New wraps the caller's): it sends a
// command again, after a short pause, while Redis answers that it did not
// run it, until the call's ctx ends. While a Cluster moves a slot to
// another node (a resharding), a command whose keys are split between the
// two nodes is answered TRYAGAIN, and so is a MULTI's EXEC (or EXEC
// answers EXECABORT after a command refused as it was queued); a Cluster
// without a master for a slot answers CLUSTERDOWN, and a node still
// loading its data LOADING. Each comes before anything runs, so that
// sending it again applies it once, a write too. rueidis follows MOVED
// and ASK itself, but sends the others again only for a retryable command
// (a read), and a transaction only when a read in it was refused, never
// when its EXEC was. A network error says nothing of whether a write ran:
// such a command is never sent again. A command that must come after a
// write before it in its DoMulti (scripts.Call.Follows: a shadow layout's
// repair or a top mirror's rewrite, which copy what the write wrote; a
// mirror's delete) ran too early when the write is sent again:
// scripts.ExecMulti says which commands follow (DoMultiFollows; through
// primaryOnly too, which passes them on), and those are sent again with
// the write, after it.
//
// rueidis recycles a command once sent, its arguments cleared: a command
// that may be sent again has its arguments kept first (sent), and is
// built again from them. Pinning it instead (Completed.Pin) would keep
// rueidis from reusing it, a few allocations a command, on every call; a
// read, or a pipeline of reads alone, which rueidis sends again itself,
// goes as it is, however long. A longer pipeline goes in pieces
// (pipeChunk).
type resending struct{ rueidis.Client }

// callerClient is the client the caller gave New, under the board's
// wrapper (resending): for rueidis helpers that choose their way by the
// client's own type (rueidis.MGetCache reads a client built with
// DisableCache with plain GETs), which the wrapper would hide.
func callerClient(c rueidis.Client) rueidis.Client {
	if r, ok := c.(resending); ok {
		return r.Client
	}
	return c
}

// resendPause is the first pause before a command is sent again; each
// next one is twice as long, up to resendPauseMax.
const (
	resendPause    = time.Millisecond
	resendPauseMax = 100 * time.Millisecond
)

// Do sends cmd, and again while Redis refuses it.
func (c resending) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cmd.IsRetryable() {
		return c.Client.Do(ctx, cmd)
	}
	s := keep(cmd)
	defer s.release()
	for pause := resendPause; ; pause = min(2*pause, resendPauseMax) {
		res := c.Client.Do(ctx, cmd)
		if !notRun(res.Error()) || !wait(ctx, pause) {
			return res
		}
		cmd = s.cmd(c.B(), 0)
	}
}

// DoMulti sends cmds and sends again, all at once, the ones Redis answered
// that it did not run: a command outside a transaction, or a whole
// MULTI..EXEC whose replies prove that it did not run (txNotRun). The
// others, which ran or may have, keep their replies. More than pipeChunk
// commands go in several DoMultis (inChunks).
func (c resending) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	return c.DoMultiFollows(ctx, nil, cmds...)
}

// DoMultiFollows is DoMulti, told which of cmds follow what came before
// them on their node (follows[i]; nil: none; see scripts.Call.Follows):
// those after the first command sent again, which ran before it, are sent
// again with it, after it, in their order (scripts.WithFollowers). So is
// scripts.ExecMulti's DoMulti sent (scripts.Resender). No command, no
// call: rueidis would send nothing, but a client that wraps its own (a
// tracer, a metrics hook) would count a call Redis never saw, and the
// board's paths that may have nothing to send (a Rebuild's ids, copies
// to drop) need not each check.
func (c resending) DoMultiFollows(ctx context.Context, follows []bool, cmds ...rueidis.Completed) []rueidis.RedisResult {
	switch {
	case len(cmds) == 0:
		return nil
	case allRetryable(cmds):
		// Reads alone, which write nothing a follower (a write) copies.
		return c.Client.DoMulti(ctx, cmds...)
	case len(cmds) > pipeChunk:
		return c.inChunks(ctx, follows, cmds)
	}
	return c.doMulti(ctx, follows, cmds)
}

// pipeChunk is the most commands the board's client sends in one DoMulti
// (but for a transaction, never split: maxTx). rueidis sends a DoMulti of
// BlockingPipeline commands or more (2,000 by default; on a Cluster, that
// many to one node) on a connection of its dedicated pool, not on the
// auto-pipelined one, and such a connection, idle in the pool when Redis
// closed it (a restart, a failover, Redis's timeout, a proxy), answers
// its next use with a network error, which rueidis sends again only for
// reads: a write would fail, though Redis is up (TestFaultRestartRebuild,
// TestLongPipelineAfterDrop). An auto-pipelined connection is the one
// every call uses: once calls overlapped on it its reader runs and sees
// such a close as it happens, and rueidis dials again; one used a call at
// a time, like an idle pooled one, finds it on its next use, or by
// rueidis's ping (every Dialer.KeepAlive, a second by default) if that
// comes first. A write right after a restart can still fail so, once, as
// any write can; a long pipeline no longer waits on a pooled connection
// that sat idle since the last one.
const pipeChunk = 1000

// maxTx is the most commands a MULTI..EXEC the board builds holds, MULTI
// and EXEC included: inChunks sends a transaction longer than pipeChunk
// whole, in a DoMulti of its own, which must stay under rueidis's
// BlockingPipeline. A builder whose transaction could grow past it takes
// another form beyond it (one script, larger commands).
const maxTx = 1500

// inChunks sends cmds in DoMultis of at most pipeChunk commands (a
// transaction whole), one after another, in order, and returns their
// results in order. Once a DoMulti fails on the network (or its ctx ends)
// the commands after it are not sent and take its error, as in one
// pipeline, where the commands after a broken connection's failed too: no
// command runs after one that may not have. A chunk's commands that Redis
// refused are sent again (until they run or the ctx ends) before the next
// chunk is sent, so that a follower (follows, as DoMultiFollows) in a
// later chunk runs after them, as in one pipeline.
func (c resending) inChunks(ctx context.Context, follows []bool, cmds []rueidis.Completed) []rueidis.RedisResult {
	res := make([]rueidis.RedisResult, 0, len(cmds))
	for len(cmds) > 0 {
		n := chunkEnd(cmds, pipeChunk)
		var fs []bool
		if follows != nil {
			fs, follows = follows[:n], follows[n:]
		}
		got := c.doMulti(ctx, fs, cmds[:n])
		res, cmds = append(res, got...), cmds[n:]
		if err := nonRedisErr(got); err != nil {
			for range cmds {
				res = append(res, rueidis.NewErrorResult(err))
			}
			break
		}
	}
	return res
}

// chunkEnd is how many of cmds, at most limit, the next DoMulti of
// inChunks takes: it ends outside a MULTI..EXEC, and takes a transaction
// longer than limit alone.
func chunkEnd(cmds []rueidis.Completed, limit int) int {
	end, inTx := 0, false
	for i := range cmds {
		switch args := cmds[i].Commands(); {
		case isMulti(args):
			inTx = true
		case isExec(args) || isDiscard(args):
			inTx = false
		}
		if !inTx {
			end = i + 1
		}
		if i+1 >= limit && end > 0 {
			return end
		}
	}
	return len(cmds)
}

// nonRedisErr is the first error of res that is not Redis's answer (a
// network error, the ctx's end), nil when none is.
func nonRedisErr(res []rueidis.RedisResult) error {
	for i := range res {
		if err := res[i].NonRedisError(); err != nil {
			return err
		}
	}
	return nil
}

// doMulti is DoMultiFollows of at most pipeChunk commands, or one
// transaction.
func (c resending) doMulti(ctx context.Context, follows []bool, cmds []rueidis.Completed) []rueidis.RedisResult {
	s := keep(cmds...)
	defer s.release()
	res := c.Client.DoMulti(ctx, cmds...)
	for pause := resendPause; ; pause = min(2*pause, resendPauseMax) {
		again := s.notRunIn(res)
		if len(again) == 0 || !wait(ctx, pause) {
			return res
		}
		again = scripts.WithFollowers(again, follows)
		resend := make(rueidis.Commands, len(again))
		for j, i := range again {
			resend[j] = s.cmd(c.B(), i)
		}
		for j, r := range c.Client.DoMulti(ctx, resend...) {
			res[again[j]] = r
		}
	}
}

// allRetryable reports whether rueidis sends each of cmds again itself
// (reads), none in a transaction (MULTI is not retryable).
func allRetryable(cmds []rueidis.Completed) bool {
	for i := range cmds {
		if !cmds[i].IsRetryable() {
			return false
		}
	}
	return true
}

// sent is the arguments of the commands of one Do or DoMulti, kept before
// they are sent. Pooled: a call that Redis does not refuse allocates
// nothing for it.
type sent struct {
	args []string // the commands' arguments, one after another
	ends []int    // where each command's arguments end in args
}

var sentPool = sync.Pool{New: func() any { return new(sent) }}

// sentPoolMax is the most arguments a pooled sent keeps room for: a
// Rebuild's pipelines, far longer, do not pin that much memory in it.
const sentPoolMax = 1 << 12

// keep copies the arguments of cmds, before they are sent: the strings
// themselves, which rueidis's clearing of its own slice leaves alone.
func keep(cmds ...rueidis.Completed) *sent {
	s := sentPool.Get().(*sent)
	for i := range cmds {
		s.args = append(s.args, cmds[i].Commands()...)
		s.ends = append(s.ends, len(s.args))
	}
	return s
}

// release gives s back to the pool once its commands are answered.
func (s *sent) release() {
	if cap(s.args) > sentPoolMax {
		return
	}
	clear(s.args) // the strings are the caller's: not kept alive by the pool
	s.args, s.ends = s.args[:0], s.ends[:0]
	sentPool.Put(s)
}

// of is command i's arguments.
func (s *sent) of(i int) []string {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.args[start:s.ends[i]]
}

// cmd builds command i again, routed by the same key: the first of a
// script's keys, else the argument after the command's name, which every
// command the board sends names its key with (a MULTI's commands share
// their slot).
func (s *sent) cmd(b rueidis.Builder, i int) rueidis.Completed {
	args := s.of(i)
	switch {
	case isMulti(args):
		return b.Multi().Build()
	case isExec(args):
		return b.Exec().Build()
	}
	k := 1
	if strings.HasPrefix(args[0], "EVAL") || strings.HasPrefix(args[0], "FCALL") {
		k = 3 // EVALSHA sha numkeys key...
		if len(args) <= k || args[2] == "0" {
			return b.Arbitrary(args...).Build()
		}
	}
	if len(args) <= k {
		return b.Arbitrary(args...).Build()
	}
	return b.Arbitrary(args[:k]...).Keys(args[k]).Args(args[k+1:]...).Build()
}

// notRunIn lists the commands to send again of those whose replies are
// res.
func (s *sent) notRunIn(res []rueidis.RedisResult) []int {
	var again []int
	for i := 0; i < len(res); i++ {
		if !isMulti(s.of(i)) {
			if notRun(res[i].Error()) {
				again = append(again, i)
			}
			continue
		}
		end := i + 1
		for end < len(res) && !isExec(s.of(end)) {
			end++
		}
		if end == len(res) {
			return again // a MULTI without its EXEC: not the board's
		}
		if txNotRun(res[i : end+1]) {
			for k := i; k <= end; k++ {
				again = append(again, k)
			}
		}
		i = end
	}
	return again
}

// txNotRun reports whether a MULTI..EXEC's replies prove that it did not
// run: its EXEC failed, and for a reason that comes before anything runs
// (notRun), on EXEC itself or on a command being queued (EXEC then answers
// EXECABORT); every other reply is MULTI's OK or a command's QUEUED.
func txNotRun(res []rueidis.RedisResult) bool {
	last := len(res) - 1
	if _, ok := rueidis.IsRedisErr(res[last].Error()); !ok {
		return false
	}
	refused := notRun(res[last].Error())
	for _, r := range res[:last] {
		if err := r.Error(); err != nil {
			if !notRun(err) {
				return false
			}
			refused = true
		} else if s, _ := r.ToString(); s != "OK" && s != "QUEUED" {
			return false
		}
	}
	return refused
}

// notRun reports whether err is Redis's answer that it did not run a
// command, which may then be sent again: TRYAGAIN (a slot migrating, the
// command's keys on both sides), CLUSTERDOWN, LOADING.
func notRun(err error) bool {
	e, ok := rueidis.IsRedisErr(err)
	return ok && (e.IsTryAgain() || e.IsClusterDown() || e.IsLoading())
}

// sendOnce marks a ctx whose commands are never sent again (bestEffort).
type sendOnce struct{}

// bestEffort is ctx, without its end, for an upkeep sent after a call's
// write even when the call's ctx has ended (a hot top's mirrors dropped,
// a rebuild's copies deleted), whose failure leaves only keys that expire:
// its commands are sent once, as sending a refused one again would hold
// the call past its ctx for as long as Redis refuses.
func bestEffort(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), sendOnce{}, true)
}

// wait pauses for d before a command is sent again, and reports false, at
// once, when ctx ends first or says it is not to be (bestEffort).
func wait(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil || ctx.Value(sendOnce{}) != nil {
		return false
	}
	return pause(ctx, d) == nil
}

func isMulti(args []string) bool   { return len(args) == 1 && args[0] == "MULTI" }
func isExec(args []string) bool    { return len(args) == 1 && args[0] == "EXEC" }
func isDiscard(args []string) bool { return len(args) == 1 && args[0] == "DISCARD" }
