package leaderboard

import (
	"fmt"
	"strconv"
)

// formatScore renders a score so that Redis parses back the same float64.
func formatScore(f float64) string {
	if f == 0 {
		return "0" // never "-0": a stored -0 would print as "-0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// scriptValue is a submitted score as the write scripts take it: the
// score, or under a tie-break the scaled integer score (the script
// composes it with the time slot). The score was checked by the front.
func (lb *Leaderboard) scriptValue(score float64) string {
	if lb.tb == nil {
		return formatScore(score)
	}
	s, _ := lb.tb.scaled(score)
	return strconv.FormatInt(s, 10)
}

// slotsArg is the tie-break's slot count for the scripts; "0" for none.
func (lb *Leaderboard) slotsArg() string {
	if lb.tb == nil {
		return "0"
	}
	return strconv.FormatInt(lb.tb.slots, 10)
}

// idArgs appends a write script's WithID arguments: the id (empty for none),
// now, and when Redis forgets the id, in unix ms, or "store" when the store
// reports the id applied (storeKnowsApplied).
func (lb *Leaderboard) idArgs(args []string, sub submission) []string {
	now := sub.at.UnixMilli()
	forget := strconv.FormatInt(now+lb.dedupe.Milliseconds(), 10)
	if sub.storeSeen {
		forget = "store" // see seen_before in internal/scripts/common.lua
	}
	return append(args, sub.id, strconv.FormatInt(now, 10), forget)
}

// tieBreakArgs appends the tie-break's part of a write script's arguments:
// slots, the time slot, whether the tie part is reversed, the largest |S|.
func (lb *Leaderboard) tieBreakArgs(args []string, slot int64) []string {
	if lb.tb == nil {
		return append(args, "0", "0", "0", "0")
	}
	return append(args, lb.slotsArg(), strconv.FormatInt(slot, 10),
		flag(lb.tb.reversed(lb.high())), strconv.FormatInt(lb.tb.maxS, 10))
}

// scriptErr maps a write script's refusals to the sentinels; what names
// the refused write in the message.
func (lb *Leaderboard) scriptErr(op string, err error, what string) error {
	switch {
	case err == nil:
		return nil
	case scriptRefusal(err, "LBOVERFLOW"):
		return fmt.Errorf("%w: %s would overflow (%v)", ErrInvalidScore, what, err)
	case scriptRefusal(err, "LBRANGE"):
		return fmt.Errorf("%w: %s would pass MaxScore %v (%v)", ErrPrecision, what, lb.tb.order.MaxScore, err)
	}
	return wrap(op, err)
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
