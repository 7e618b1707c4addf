package leaderboard

import (
	"fmt"
	"strconv"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// formatScore renders a score so that Redis parses back the same float64.
func formatScore(f float64) string {
	if f == 0 {
		return "0" // never "-0": a stored -0 would print as "-0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// subValue is a checked submission's value as the write scripts take it:
// its score, or under a tie-break its scaled score, which the script
// composes with the time slot (a folded Accumulate submission carries its
// sum there, which the score may not hold exactly).
func (lb *Leaderboard) subValue(sub submission) string {
	if lb.tb == nil {
		return formatScore(sub.score)
	}
	return strconv.FormatInt(sub.s, 10)
}

// scriptValue is a score of a bulk load as the write scripts take it, as
// subValue: the score, or under a tie-break the scaled integer score. The
// score was checked by the front.
func (lb *Leaderboard) scriptValue(score float64) string {
	if lb.tb == nil {
		return formatScore(score)
	}
	s, _ := lb.tb.scaled(score)
	return strconv.FormatInt(s, 10)
}

// readHeader is the scripts' argument header for a read: the board's
// order, ranking and tie-break slots.
func (lb *Leaderboard) readHeader() scripts.Header {
	h := scripts.Header{High: lb.high(), Competition: lb.ranking == Competition, ReadOnly: lb.replicaReads}
	if lb.tb != nil {
		h.Slots = lb.tb.slots
	}
	return h
}

// writeHeader is the header for a write whose tie-break time slot is slot,
// with sub's WithID id and data when sub has them (sub nil: none).
func (lb *Leaderboard) writeHeader(slot int64, sub *submission) scripts.Header {
	h := lb.readHeader()
	h.Policy = lb.policyArg()
	if lb.tb != nil {
		h.Slot, h.Reversed, h.MaxS = slot, lb.tb.reversed(lb.high()), lb.tb.maxS
	}
	if sub != nil && sub.id != "" {
		h.ID, h.Now = sub.id, sub.at.UnixMilli()
		h.Forget, h.Applied = lb.forgetMs(sub.at), sub.storeSeen
	}
	if sub != nil {
		h.Data = sub.data
		if sub.set {
			h.Policy = "SET"
		}
	}
	return h
}

// keysOf lists the keys of window periods and their expiries, as the
// write scripts take them.
func keysOf(live []target) (ks []string, expires []int64) {
	ks = make([]string, len(live))
	for i, tg := range live {
		ks[i] = tg.key
	}
	return ks, expiresOf(live)
}

// expiresOf lists the expiries of window periods (unix ms, 0 for none).
func expiresOf(live []target) []int64 {
	out := make([]int64, len(live))
	for i, tg := range live {
		out[i] = tg.expire
	}
	return out
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
		return beyondMax(fmt.Sprintf("%s would pass MaxScore %v (%v)", what, lb.tb.order.MaxScore, err))
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
