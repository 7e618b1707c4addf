package leaderboard

import (
	"context"
	"fmt"
)

// VerifyReport is what Verify found in one window period.
type VerifyReport struct {
	// Window and Period name the period compared.
	Window, Period string
	// StoreMembers and RedisMembers count the members on each side.
	StoreMembers, RedisMembers int64
	// Missing lists members the store has and Redis lacks; Different, those
	// whose stored value differs. At most VerifySample names each; the
	// counts are exact.
	Missing, Different []string
	// MissingCount and DifferentCount count them all.
	MissingCount, DifferentCount int64
	// Extra counts members Redis has and the store lacks: RedisMembers less
	// those the store has that Redis holds, never below 0. On a sharded
	// board RedisMembers counts the shards and the rest the partitions, so
	// a shard lacking a member and one holding a stray can cancel out here:
	// Check compares the shards with the partitions.
	Extra int64
	// Store is the store's check of its kept standings against its own log
	// for the period, when the store is a StandingsChecker (zero
	// otherwise): kept standings that drifted from the log would else be
	// compared with Redis as if they were the truth.
	Store StandingsCheck
}

// VerifySample is how many names a VerifyReport lists per kind.
const VerifySample = 100

// Clean reports whether Redis and the store agree, and the store's kept
// standings with its log.
func (r VerifyReport) Clean() bool {
	return r.MissingCount == 0 && r.DifferentCount == 0 && r.Extra == 0 && r.Store.DifferCount == 0
}

// Verify checks, for every live period of every window, two things:
//
//   - Redis against the store: the standings Store.Standings gives for the
//     period (the store's kept standings where it keeps them, else the
//     aggregation of its log) against Redis, member by member: a member
//     missing from Redis, a stored value that differs (the composite under
//     a tie-break), and the members Redis has beyond them, read back in
//     batches of 1,000. On a sharded board Redis's values are the
//     partitions' and its member count the shards'; Check compares the
//     shards with the partitions.
//   - The store against itself, when it is a StandingsChecker (pgstore
//     is): its kept standings against the aggregation of its own log
//     (VerifyReport.Store), without repairing them.
//
// It does not check the log itself (a submission that never reached the
// store cannot show) nor the WithID ids. The basis of an alarm; it reads
// whole periods, so run it from a maintenance job. It reads the store and
// Redis at different moments, in batches: a write that runs meanwhile can
// show as a difference on a board that is sound, so verify while writes
// are paused, or verify again before alerting on a report that is not
// Clean. A period whose retention ends on the board's clock while it is
// read is left out, as gone (Redis may have expired its key part way). It
// reads the primaries, with WithReplicaReads too. Without a store it
// returns ErrInvalidArgument.
func (lb *Leaderboard) Verify(ctx context.Context) (_ []VerifyReport, err error) {
	defer endedWith(ctx, &err)
	if lb.store == nil {
		return nil, fmt.Errorf("%w: Verify needs a store (WithStore)", ErrInvalidArgument)
	}
	if err := notStarted(ctx, "verify"); err != nil {
		return nil, err
	}
	live, err := lb.livePeriods(lb.now())
	if err != nil {
		return nil, err
	}
	// Redis as the primaries hold it (WithReplicaReads): a replica trails
	// the writes the store already holds.
	view := lb.primaryView()
	var out []VerifyReport
	for _, tg := range live {
		r, err := view.verifyPeriod(ctx, tg)
		if expiredAt(tg, lb.now()) != nil {
			// Its retention ended as it was read: Redis may have expired
			// its key part way, which would show as members missing from a
			// sound board. It is gone, as Seal takes it.
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (lb *Leaderboard) verifyPeriod(ctx context.Context, tg target) (VerifyReport, error) {
	r := VerifyReport{Window: tg.window.Name(), Period: tg.period.ID}
	var matched int64
	members := make([]string, 0, rebuildBatch)
	want := make([]float64, 0, rebuildBatch)
	compare := func() error {
		n, err := lb.verifyBatch(ctx, &r, tg, members, want)
		matched += n
		members, want = members[:0], want[:0]
		return err
	}
	err := lb.store.Standings(ctx, lb.query(tg), func(st StoredStanding) error {
		v, err := lb.storedValue(st)
		if err != nil {
			return nil // Rebuild leaves it out too, and reports it
		}
		r.StoreMembers++
		members, want = append(members, st.Member), append(want, v)
		if len(members) == rebuildBatch {
			return compare()
		}
		return nil
	})
	if err == nil {
		err = compare()
	}
	if err != nil {
		return r, wrap("verify "+tg.window.Name()+"/"+tg.period.ID, err)
	}
	if r.RedisMembers, err = lb.be.count(ctx, tg); err != nil {
		return r, wrap("verify", err)
	}
	r.Extra = max(0, r.RedisMembers-matched)
	if c, ok := lb.store.(StandingsChecker); ok {
		if r.Store, err = c.CheckStandings(ctx, lb.query(tg), false); err != nil {
			return r, fmt.Errorf("leaderboard: verify %s/%s: store: %w", tg.window.Name(), tg.period.ID, err)
		}
	}
	return r, nil
}

// verifyBatch reads members' stored values from Redis, files those missing
// or different from want into r, and returns how many Redis holds.
func (lb *Leaderboard) verifyBatch(ctx context.Context, r *VerifyReport, tg target, members []string, want []float64) (matched int64, err error) {
	if len(members) == 0 {
		return 0, nil
	}
	got, err := lb.be.stored(ctx, tg, members)
	if err != nil {
		return 0, err
	}
	for i, m := range got {
		v, ok, err := optFloat(&m)
		switch {
		case err != nil:
			return matched, err
		case !ok:
			r.MissingCount++
			if len(r.Missing) < VerifySample {
				r.Missing = append(r.Missing, members[i])
			}
			continue
		case v != want[i]:
			r.DifferentCount++
			if len(r.Different) < VerifySample {
				r.Different = append(r.Different, members[i])
			}
		}
		matched++
	}
	return matched, nil
}
