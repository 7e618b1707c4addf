package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/skiprank/leaderboard"
)

// Member data (-data N): every loaded member gets N bytes of data, set
// with SetData on the board and with HSET in the raw versions' data hash,
// and the operations top-data and rank-data read it back.

// dataOf is member i's data: its name, padded to n bytes.
func dataOf(i, n int) string {
	s := "name:" + strconv.Itoa(i)
	if len(s) >= n {
		return s[:n]
	}
	return s + strings.Repeat(".", n-len(s))
}

// rawData is the raw versions' data hash, beside their sorted sets.
func (b *bench) rawData() string { return b.raw[0].key + ":data" }

// loadData gives members [lo, hi) their data: on the board with SetData
// (one call each, pipelined by rueidis), in the raw hash with one HSET.
func (b *bench) loadData(ctx context.Context, board *leaderboard.Leaderboard, raw bool, lo, hi int) error {
	if b.cfg.data == 0 {
		return nil
	}
	if raw {
		h := b.c.rue.B().Hset().Key(b.rawData()).FieldValue()
		for i := lo; i < hi; i++ {
			h = h.FieldValue(member(i), dataOf(i, b.cfg.data))
		}
		return b.c.rue.Do(ctx, h.Build()).Error()
	}
	errs := make(chan error, hi-lo)
	for i := lo; i < hi; i++ {
		go func() { errs <- board.SetData(ctx, member(i), dataOf(i, b.cfg.data)) }()
	}
	for range hi - lo {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// topDataOp is Top(10) with the members' data: the SDK's IncludeData
// against the ZRANGE then HMGET a user writes by hand (two round trips).
func (b *bench) topDataOp() operation {
	key := b.raw[0].key
	op := operation{name: "top-data", desc: "Top(10) with each member's data (IncludeData); \"rueidis\" reads the range, then HMGETs its members' data: two round trips"}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, _ *worker) error {
			es, err := b.board.Top(ctx, 10, leaderboard.IncludeData())
			if err == nil && (len(es) != 10 || es[9].Data == "") {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, _ *worker) error {
			zs, err := b.c.rue.Do(ctx, b.rangeCmd(key, 0, 9)).AsZScores()
			if err != nil || len(zs) != 10 {
				return orCheck(err)
			}
			members := make([]string, len(zs))
			for i, z := range zs {
				members[i] = z.Member
			}
			data, err := b.c.rue.Do(ctx, b.c.rue.B().Hmget().Key(b.rawData()).Field(members...).Build()).AsStrSlice()
			if err == nil && (len(data) != 10 || data[9] == "") {
				return errCheck
			}
			return err
		}},
	)
	return b.withBaselines(op)
}

// rankDataOp is Rank with the member's data: the SDK's IncludeData against
// the rank's MULTI with an HGET in it.
func (b *bench) rankDataOp() operation {
	key := b.raw[0].key
	op := operation{name: "rank-data", desc: "Rank with the member's data (IncludeData); \"rueidis MULTI\" reads the standing and an HGET of the data in one MULTI/EXEC"}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			st, err := b.board.Rank(ctx, b.members[w.pick(poolSize)], leaderboard.IncludeData())
			if err == nil && (st.Rank < 1 || st.Data == "") {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis MULTI", units: 1, call: func(ctx context.Context, w *worker) error {
			m := b.members[w.pick(poolSize)]
			bd := b.c.rue.B()
			res := b.c.rue.DoMulti(ctx, bd.Multi().Build(), bd.Zscore().Key(key).Member(m).Build(), b.rankCmd(key, m), bd.Zcard().Key(key).Build(),
				bd.Hget().Key(b.rawData()).Field(m).Build(), bd.Exec().Build())
			replies, err := res[5].ToArray()
			if err != nil {
				return err
			}
			if d, err := replies[3].ToString(); err != nil || d == "" {
				return orCheck(err)
			}
			return checkStanding(replies[:3])
		}},
	)
	return b.withBaselines(op)
}

// orCheck is err, or errCheck when there is none.
func orCheck(err error) error {
	if err != nil {
		return err
	}
	return errCheck
}

// needsData reports the operations that read data, which need -data.
func needsData(op string) bool { return strings.HasSuffix(op, "-data") }

// checkDataFlag refuses -data out of range, and data operations without it.
func checkDataFlag(cfg *config) error {
	if cfg.data < 0 || cfg.data > leaderboard.MaxDataLen {
		return fmt.Errorf("-data %d: want 0..%d", cfg.data, leaderboard.MaxDataLen)
	}
	for _, op := range cfg.ops {
		if needsData(op) && cfg.data == 0 {
			return fmt.Errorf("-ops %s reads member data: give -data N (bytes per member)", op)
		}
	}
	return nil
}
