package leaderboard

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// Submit applies the board's policy to member's score in every configured
// window, atomically, in one round trip, and sets each windowed key's expiry
// to its period's end plus the retention.
//
// The period each window writes to is the one holding the submission's time
// (the board's clock, or WithTime). A window whose period has already expired
// is skipped and reported Closed.
//
// A NaN or ±Inf score, or an Accumulate total that would overflow, returns
// ErrInvalidScore; a bad member ErrInvalidMember; a time after the clock's now
// ErrInvalidArgument. Nothing is written then.
func (lb *Leaderboard) Submit(ctx context.Context, member string, score float64, opts ...SubmitOption) (Result, error) {
	if err := checkMember(member); err != nil {
		return Result{}, err
	}
	if err := checkScore(score); err != nil {
		return Result{}, err
	}
	if score == 0 {
		score = 0 // -0 would be stored as "-0"
	}
	var sc submitConfig
	for _, opt := range opts {
		if opt == nil {
			return Result{}, fmt.Errorf("%w: nil submit option", ErrInvalidArgument)
		}
		opt(&sc)
	}
	if sc.id != "" {
		return Result{}, fmt.Errorf("%w: WithID is not yet supported", ErrInvalidArgument)
	}
	now := lb.now()
	at := now
	if !sc.at.IsZero() {
		if sc.at.After(now) {
			return Result{}, fmt.Errorf("%w: WithTime %v is after the clock's now %v", ErrInvalidArgument, sc.at, now)
		}
		at = sc.at
	}

	res := Result{Windows: make([]WindowResult, len(lb.windows))}
	live := make([]target, 0, len(lb.windows))
	where := make([]int, 0, len(lb.windows)) // live[j] reports into res.Windows[where[j]]
	for i, w := range lb.windows {
		tg, err := lb.target(w, at)
		if err != nil {
			return Result{}, err
		}
		res.Windows[i] = WindowResult{Window: w.Name(), Period: tg.period.ID, Previous: Entry{Member: member}}
		if tg.expire != 0 && tg.expire <= now.UnixMilli() {
			res.Windows[i].Closed = true
			continue
		}
		live = append(live, tg)
		where = append(where, i)
	}
	if len(live) > 0 {
		var err error
		if lb.ranking == Ordinal && lb.policy != Accumulate {
			err = lb.submitTx(ctx, member, score, live, where, res.Windows)
		} else {
			err = lb.submitScript(ctx, member, score, live, where, res.Windows)
		}
		if err != nil {
			return Result{}, err
		}
	}
	first := res.Windows[0]
	res.Standing, res.Previous, res.Changed = first.Standing, first.Previous, first.Changed
	return res, nil
}

// submitTx runs KeepBest and Replace under Ordinal ranks as one MULTI/EXEC of
// plain commands: nothing needs to branch on what is stored, and a
// transaction costs Redis less than a script doing the same.
func (lb *Leaderboard) submitTx(ctx context.Context, member string, score float64, live []target, where []int, out []WindowResult) error {
	b := lb.client.B()
	const perWindow = 6
	cmds := make(rueidis.Commands, 0, 2+perWindow*len(live))
	cmds = append(cmds, b.Multi().Build())
	for _, tg := range live {
		cmds = append(cmds, b.Zscore().Key(tg.key).Member(member).Build(), lb.rankCmd(tg.key, member))
		switch {
		case lb.policy == Replace:
			cmds = append(cmds, b.Zadd().Key(tg.key).Ch().ScoreMember().ScoreMember(score, member).Build())
		case lb.high():
			cmds = append(cmds, b.Zadd().Key(tg.key).Gt().Ch().ScoreMember().ScoreMember(score, member).Build())
		default:
			cmds = append(cmds, b.Zadd().Key(tg.key).Lt().Ch().ScoreMember().ScoreMember(score, member).Build())
		}
		if tg.expire != 0 {
			cmds = append(cmds, b.Pexpireat().Key(tg.key).MillisecondsTimestamp(tg.expire).Build())
		} else {
			// Keeps every window's replies the same length.
			cmds = append(cmds, b.Ping().Build())
		}
		cmds = append(cmds, lb.rankCmd(tg.key, member), b.Zcard().Key(tg.key).Build())
	}
	cmds = append(cmds, b.Exec().Build())
	replies, err := execResult(lb.client.DoMulti(ctx, cmds...))
	if err != nil {
		return wrap("submit", err)
	}
	if len(replies) != perWindow*len(live) {
		return wrap("submit", fmt.Errorf("transaction returned %d replies, want %d", len(replies), perWindow*len(live)))
	}
	for j := range live {
		r := replies[perWindow*j : perWindow*(j+1)]
		wr := &out[where[j]]
		prev, had, err := optFloat(&r[0])
		if err != nil {
			return wrap("submit", err)
		}
		if had {
			prank, _, err := optInt(&r[1])
			if err != nil {
				return wrap("submit", err)
			}
			wr.Previous = Entry{Member: member, Score: prev, Rank: prank + 1}
		}
		changed, err := r[2].AsInt64()
		if err != nil {
			return wrap("submit", err)
		}
		wr.Changed = changed == 1
		after := score
		if !wr.Changed {
			after = prev
		}
		rank, err := r[4].AsInt64()
		if err != nil {
			return wrap("submit", err)
		}
		total, err := r[5].AsInt64()
		if err != nil {
			return wrap("submit", err)
		}
		wr.Standing = lb.standing(member, after, rank+1, 0, total)
	}
	return nil
}

// submitScript runs the policies and rank modes that must branch on what is
// stored (see internal/scripts/submit.lua).
func (lb *Leaderboard) submitScript(ctx context.Context, member string, score float64, live []target, where []int, out []WindowResult) error {
	ks := make([]string, len(live))
	args := make([]string, 0, 5+len(live))
	args = append(args, member, formatScore(score), lb.policyArg(), flag(lb.high()), flag(lb.ranking == Competition))
	for i, tg := range live {
		ks[i] = tg.key
		args = append(args, strconv.FormatInt(tg.expire, 10))
	}
	replies, err := scripts.Submit.Exec(ctx, lb.client, ks, args).ToArray()
	if err != nil {
		if isOverflow(err) {
			return fmt.Errorf("%w: adding %v to %q would overflow", ErrInvalidScore, score, member)
		}
		return wrap("submit", err)
	}
	const perWindow = 6
	if len(replies) != perWindow*len(live) {
		return wrap("submit", fmt.Errorf("script returned %d values, want %d", len(replies), perWindow*len(live)))
	}
	for j := range live {
		r := replies[perWindow*j : perWindow*(j+1)]
		wr := &out[where[j]]
		var v [4]int64 // previous rank, rank, total, worse
		for k, at := range [4]int{1, 3, 4, 5} {
			if v[k], err = r[at].AsInt64(); err != nil {
				return wrap("submit", err)
			}
		}
		prevRank, rank, total, worse := v[0], v[1], v[2], v[3]
		prev, had, err := optFloat(&r[0])
		if err != nil {
			return wrap("submit", err)
		}
		after, err := r[2].AsFloat64()
		if err != nil {
			return wrap("submit", err)
		}
		if had {
			wr.Previous = Entry{Member: member, Score: prev, Rank: prevRank}
		}
		wr.Changed = !had || prev != after
		wr.Standing = lb.standing(member, after, rank, worse, total)
	}
	return nil
}

// SubmitMany applies the board's policy to many members' scores in every
// configured window's current period, atomically, in one round trip. It is
// the bulk load: it reports no standings. Every member and score is checked
// first; one bad entry refuses the whole batch and nothing is written.
func (lb *Leaderboard) SubmitMany(ctx context.Context, scores map[string]float64) error {
	for m, s := range scores {
		if err := checkMember(m); err != nil {
			return err
		}
		if err := checkScore(s); err != nil {
			return fmt.Errorf("%w (member %q)", err, m)
		}
	}
	if len(scores) == 0 {
		return nil
	}
	now := lb.now()
	live := make([]target, 0, len(lb.windows))
	for _, w := range lb.windows {
		tg, err := lb.target(w, now)
		if err != nil {
			return err
		}
		live = append(live, tg)
	}
	if lb.policy == Accumulate {
		return lb.accumulateMany(ctx, scores, live)
	}
	b := lb.client.B()
	// Redis parses a command's arguments into one buffer: chunks keep any one
	// ZADD small, while the transaction keeps the batch atomic.
	const chunk = 1000
	cmds := make(rueidis.Commands, 0, 2+len(live)*(2+len(scores)/chunk))
	cmds = append(cmds, b.Multi().Build())
	for _, tg := range live {
		args := make([]string, 0, 1+2*min(chunk, len(scores)))
		flush := func() {
			cmds = append(cmds, b.Arbitrary("ZADD").Keys(tg.key).Args(args...).Build())
			args = args[:0]
		}
		for m, s := range scores {
			if len(args) == 0 && lb.policy == KeepBest {
				args = append(args, lb.policyArg())
			}
			args = append(args, formatScore(s), m)
			if len(args) >= 2*chunk {
				flush()
			}
		}
		if len(args) > 0 {
			flush()
		}
		if tg.expire != 0 {
			cmds = append(cmds, b.Pexpireat().Key(tg.key).MillisecondsTimestamp(tg.expire).Build())
		}
	}
	cmds = append(cmds, b.Exec().Build())
	_, err := execResult(lb.client.DoMulti(ctx, cmds...))
	return wrap("submit many", err)
}

func (lb *Leaderboard) accumulateMany(ctx context.Context, scores map[string]float64, live []target) error {
	ks := make([]string, len(live))
	args := make([]string, 0, len(live)+2*len(scores))
	for i, tg := range live {
		ks[i] = tg.key
		args = append(args, strconv.FormatInt(tg.expire, 10))
	}
	for m, s := range scores {
		args = append(args, m, formatScore(s))
	}
	err := scripts.Accumulate.Exec(ctx, lb.client, ks, args).Error()
	if isOverflow(err) {
		return fmt.Errorf("%w: a total would overflow: %v", ErrInvalidScore, err)
	}
	return wrap("submit many", err)
}

// Remove deletes members from every window's current period, atomically, in
// one round trip. Members that are not ranked are ignored.
func (lb *Leaderboard) Remove(ctx context.Context, members ...string) error {
	for _, m := range members {
		if err := checkMember(m); err != nil {
			return err
		}
	}
	if len(members) == 0 {
		return nil
	}
	now := lb.now()
	b := lb.client.B()
	cmds := make(rueidis.Commands, 0, 2+len(lb.windows))
	cmds = append(cmds, b.Multi().Build())
	for _, w := range lb.windows {
		tg, err := lb.target(w, now)
		if err != nil {
			return err
		}
		cmds = append(cmds, b.Zrem().Key(tg.key).Member(members...).Build())
	}
	cmds = append(cmds, b.Exec().Build())
	_, err := execResult(lb.client.DoMulti(ctx, cmds...))
	return wrap("remove", err)
}

func (lb *Leaderboard) rankCmd(key, member string) rueidis.Completed {
	if lb.high() {
		return lb.client.B().Zrevrank().Key(key).Member(member).Build()
	}
	return lb.client.B().Zrank().Key(key).Member(member).Build()
}

func (lb *Leaderboard) policyArg() string {
	switch {
	case lb.policy == Replace:
		return "SET"
	case lb.policy == Accumulate:
		return "INCR"
	case lb.high():
		return "GT"
	default:
		return "LT"
	}
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
