package leaderboard

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// between reads Between's entries with range.lua ('between'): the members
// better than the range, the entries and their data in one script.
func (lb *plainBackend) between(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error) {
	res := scripts.BetweenCall(lb.readHeader(), tg.key, lb.dataOf(tg), r.storedLo, r.storedHi, n).Exec(ctx, lb.client)
	es, _, err := lb.rangeReply(res, tg.data)
	if es == nil && err == nil {
		es = []Entry{}
	}
	return es, err
}

func (lb *plainBackend) countBetween(ctx context.Context, tg target, r scoreRange) (int64, error) {
	return lb.client.Do(ctx, lb.client.B().Zcount().Key(tg.key).Min(r.storedLo).Max(r.storedHi).Build()).AsInt64()
}

// dropBetween removes one chunk of a score range with remove_between.lua.
func (lb *plainBackend) dropBetween(ctx context.Context, tg target, r scoreRange, n int) (int64, bool, error) {
	v, err := lb.execThenDrop(ctx, scripts.RemoveBetweenCall(lb.readHeader(), tg.key, r.storedLo, r.storedHi, n), []target{tg}).ToArray()
	if err != nil {
		return 0, false, err
	}
	if len(v) != 2 {
		return 0, false, fmt.Errorf("remove script returned %d values, want 2", len(v))
	}
	removed, err := v[0].AsInt64()
	if err != nil {
		return 0, false, err
	}
	left, err := v[1].AsInt64()
	return removed, left > 0, err
}

// evict removes members from one period, their data kept.
func (lb *plainBackend) evict(ctx context.Context, tg target, members []string) error {
	cmds := append(rueidis.Commands{lb.client.B().Zrem().Key(tg.key).Member(members...).Build()}, lb.hotDrop([]target{tg})...)
	for _, r := range lb.client.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// aroundScore reads AroundScore's place and slice with range.lua
// ('score'), which answers the members better than the score in place of
// the count.
func (lb *plainBackend) aroundScore(ctx context.Context, tg target, edge string, radius int) (int64, []Entry, error) {
	res := scripts.ScoreCall(lb.readHeader(), tg.key, lb.dataOf(tg), edge, radius).Exec(ctx, lb.client)
	es, better, err := lb.rangeReply(res, tg.data)
	if err != nil {
		return 0, nil, err
	}
	if es == nil {
		es = []Entry{}
	}
	return better + 1, es, nil
}

// walk reads All's next chunk with range.lua ('after').
func (lb *plainBackend) walk(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, error) {
	res := scripts.AfterCall(lb.readHeader(), tg.key, lb.dataOf(tg), at.value, at.member, n).Exec(ctx, lb.client)
	es, _, err := lb.rangeReply(res, tg.data)
	if err != nil {
		return nil, at, err
	}
	if len(es) < n {
		return es, walkCursor{done: true}, nil
	}
	last, err := lastStored(res, tg.data)
	return es, walkCursor{value: last, member: es[len(es)-1].Member}, err
}

// lastStored is the stored value (a string, as Redis printed it) of the
// last entry of a range.lua reply: where the next chunk of a walk resumes.
func lastStored(res rueidis.RedisResult, data bool) (string, error) {
	v, err := res.ToArray()
	if err != nil {
		return "", err
	}
	i := len(v) - 1
	if data {
		i--
	}
	if i < 4 {
		return "", fmt.Errorf("range script returned %d values for a chunk", len(v))
	}
	return v[i].ToString()
}
