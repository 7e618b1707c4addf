package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// SealedPeriod is a closed period's final standings, as sealed into the store.
type SealedPeriod struct {
	// Window and Period name the period.
	Window, Period string
	// Entries are its final standings, best first.
	Entries []Entry
}

// Seal seals every closed period whose key still lives (the ones within their
// retention) into the store, each exactly once, and runs hook (nil for none)
// once for each period it seals first (rewards, notifications); periods sealed before, and
// periods nobody played, are skipped. It returns what it sealed. A period is
// sealed once the board's clock skew (WithClockSkew) has passed after its
// end, not before: a process whose clock runs up to that far behind this one
// still writes into it (a period kept no longer than the skew is never
// sealed: its retention is over by then), and a Batcher sends a batch by the end of the periods it
// writes to. Run it from a job shortly after each reset, and again until it
// seals the period: a period whose key expired before it was sealed
// is gone. The hook runs after the seal is recorded, so a hook that fails is
// not run again for that period: it returns the error, and the hook must make
// its own retries. A period whose retention ends on the board's clock while
// it is read is skipped too, as gone. Without a store it returns ErrInvalidArgument. Sealing is
// for good, so Seal first checks that Redis holds the board as last rebuilt
// (Present, one round trip), and again after it has read each period it
// is about to seal (one round trip more a period): after a wipe, before
// the Rebuild, Redis may hold part of a period's standings, and Seal
// returns ErrNotPresent and seals nothing more (a board is rebuilt once to
// start: see Present). It seals what
// Redis holds: a write of the period that returned ErrPending is there
// only after a Rebuild (or the retry of a submission with its WithID), so
// rebuild before sealing a period that had one. With
// WithReplicaReads it reads the primaries, as a write would: a replica may not
// yet hold the last submissions of the period; with WithHotTop it reads the
// period itself, not the top mirror, which can trail a write by up to its
// 10 seconds (see WithHotTop). It reads a period page by page
// (MaxN a page, each after the first starting with the last entry of the
// one before) and seals it only whole: when a write lands in the closed
// period meanwhile (a replay WithTime, a Remove) and shifts the pages (a
// member read twice, one missed, the entry a page starts with moved, a
// count that moved), it reads the period again, and after five tries
// returns an error naming it, sealing nothing of it: run Seal again once
// the replays are over. Whole means every member once, each with a score
// and rank it held while the period was read, the entries of the pages
// read after a write landed reflecting it.
func (lb *Leaderboard) Seal(ctx context.Context, hook func(context.Context, SealedPeriod) error) (_ []SealedPeriod, err error) {
	defer endedWith(ctx, &err)
	if lb.store == nil {
		return nil, fmt.Errorf("%w: Seal needs a store (WithStore)", ErrInvalidArgument)
	}
	if err := notStarted(ctx, "seal"); err != nil {
		return nil, err
	}
	// Sealed for good from a replica's copy, a period would miss what the
	// replica had not yet received: it reads the primaries.
	view := lb.primaryView()
	if ok, err := view.Present(ctx); err != nil {
		return nil, wrap("seal", err)
	} else if !ok {
		return nil, ErrNotPresent
	}
	now := lb.now()
	live, err := lb.livePeriods(now)
	if err != nil {
		return nil, err
	}
	var out []SealedPeriod
	for _, tg := range live {
		if tg.expire == 0 || now.Before(tg.period.End.Add(lb.skew)) {
			continue // never closes, or still open on a clock within the skew behind
		}
		if _, sealed, err := lb.store.Sealed(ctx, lb.name, tg.window.Name(), tg.period.ID); err != nil {
			return out, fmt.Errorf("leaderboard: seal: store: %w", err)
		} else if sealed {
			continue
		}
		sp, first, err := lb.sealPeriod(ctx, view, tg)
		if err != nil {
			return out, err
		}
		if !first {
			continue // nobody played, gone, or another process sealed it meanwhile
		}
		out = append(out, sp)
		if hook != nil {
			if err := hook(ctx, sp); err != nil {
				return out, fmt.Errorf("leaderboard: seal hook for %s/%s: %w", sp.Window, sp.Period, err)
			}
		}
	}
	return out, nil
}

// Sealed returns the final standings of the period the queries pick (the
// default window's current period without At), as sealed into the store,
// long after its Redis key expired (the period's retention does not
// limit it, as it does the board's reads); ok is false when it was never
// sealed. It reads the store alone, no call to Redis. Without a store it
// returns ErrInvalidArgument.
func (lb *Leaderboard) Sealed(ctx context.Context, q ...Query) (entries []Entry, ok bool, err error) {
	defer endedWith(ctx, &err)
	if lb.store == nil {
		return nil, false, fmt.Errorf("%w: Sealed needs a store (WithStore)", ErrInvalidArgument)
	}
	// The period as a read picks it, but past its retention too: the
	// store keeps a sealed period for good.
	tg, _, err := lb.pick(q)
	if err != nil {
		return nil, false, err
	}
	if err := notStarted(ctx, "sealed"); err != nil {
		return nil, false, err
	}
	entries, ok, err = lb.store.Sealed(ctx, lb.name, tg.window.Name(), tg.period.ID)
	if err != nil {
		return nil, false, fmt.Errorf("leaderboard: sealed: store: %w", err)
	}
	return entries, ok, nil
}

// sealPeriod reads the closed period tg from view and seals it into the
// store, reporting whether this call sealed it first (not when nobody
// played it, its retention ended as it was read, or another process
// sealed it). Redis must still hold the board as last rebuilt once the
// period is read (Present again, one round trip): a wipe after Seal's
// first check, with a replay into the period after it, would leave Redis
// holding part of its standings, to be sealed for good.
func (lb *Leaderboard) sealPeriod(ctx context.Context, view *Leaderboard, tg target) (SealedPeriod, bool, error) {
	sp := SealedPeriod{Window: tg.window.Name(), Period: tg.period.ID}
	var err error
	if sp.Entries, err = view.sealEntries(ctx, tg); errors.Is(err, ErrExpired) {
		return sp, false, nil // gone: see Seal
	} else if err != nil || len(sp.Entries) == 0 {
		return sp, false, err // nobody played: nothing to keep or reward
	}
	if ok, err := view.Present(ctx); err != nil {
		return sp, false, wrap("seal", err)
	} else if !ok {
		return sp, false, ErrNotPresent
	}
	first, err := lb.store.Seal(ctx, lb.name, tg.window.Name(), tg.period.ID, sp.Entries)
	if err != nil {
		return sp, false, fmt.Errorf("leaderboard: seal: store: %w", err)
	}
	return sp, first, nil
}

// sealTries is how many times Seal reads a period whose standings changed
// while it read them before it gives up on it.
const sealTries = 5

// sealEntries reads a closed period's standings page by page, each page
// after the first starting with the last entry of the page before: whole
// when that entry is where it was (the same member, score and rank, so
// that no member left or entered the pages read before it), no member came
// twice, and they number the period's count after the last page. A write
// into the closed period while the pages are read (a replay WithTime, a
// Remove) shifts the pages (a member twice, one left out: a Remove on a
// page read leaves out the member first past it, with the count and every
// member once agreeing): then it reads them again, and after sealTries it
// returns an error rather than seal torn standings for good.
func (lb *Leaderboard) sealEntries(ctx context.Context, tg target) ([]Entry, error) {
	// An instant the period holds: its Start, or for a window's first
	// period, which has none, the last before its End (Seal reads ended
	// periods only).
	at := tg.period.Start
	if at.IsZero() {
		at = tg.period.End.Add(-time.Nanosecond)
	}
	for range sealTries {
		es, whole, err := lb.sealRead(ctx, []Query{In(tg.window), At(at)})
		if err != nil || whole {
			return es, err
		}
	}
	return nil, fmt.Errorf("leaderboard: seal: %s/%s changed while it was read, %d times: not sealed (run Seal again)", tg.window.Name(), tg.period.ID, sealTries)
}

// sealRead reads the period q picks once, page by page (see sealEntries),
// and reports whether what it read is whole.
func (lb *Leaderboard) sealRead(ctx context.Context, q []Query) ([]Entry, bool, error) {
	var es []Entry
	for {
		p, err := lb.positions(ctx, "page", q, int64(max(len(es)-1, 0)), MaxN, true)
		if err != nil {
			return nil, false, err
		}
		got := p.Entries
		if len(es) > 0 {
			if len(got) == 0 || got[0] != es[len(es)-1] {
				return nil, false, nil // the pages read before shifted
			}
			got = got[1:]
		}
		es = append(es, got...)
		if len(p.Entries) < MaxN {
			return es, int64(len(es)) == p.Total && len(onceEach(slices.Clone(es))) == len(es), nil
		}
	}
}
