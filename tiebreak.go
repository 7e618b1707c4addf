package leaderboard

import (
	"fmt"
	"math"
	"time"
)

// TieBreak orders members with equal scores by when they reached the score,
// by packing (score, time) into one float64 whose order is the board's order.
// Build one with EarlierFirst or LaterFirst and pass it to WithTieBreak.
//
// # The composite
//
// A score is scaled to an integer S = score × 10^Decimals, |S| <= M where
// M = MaxScore × 10^Decimals. Time is cut into slots of Resolution from
// Epoch: T = ⌊(t − Epoch) / Resolution⌋ (t cut to the microsecond; 0 for a t
// in the Epoch's microsecond before the Epoch). With H time slots, the stored value
// is
//
//	C = S × H + tie,   0 <= tie < H
//
// where tie is T or H−1−T, whichever makes the rule's preferred time the
// better one in the board's order (EarlierFirst on a HighestFirst board
// stores H−1−T, so the earliest time has the largest C). C is an integer,
// and float64 holds every integer up to 2^53 exactly, so the constructor
// picks the largest H with (M+1) × H <= 2^53, capped so that
// H × Resolution fits in a time.Duration (about 292 years): every C from −M×H to
// M×H+H−1 is then exact, Redis orders C exactly as (S, time), and
// S = ⌊C / H⌋ and tie = C − S×H decode it exactly.
//
// # The horizon
//
// The slots cover Epoch .. Epoch + H × Resolution: the horizon, returned by
// Horizon. A submission stamped before Epoch or at or after the horizon is
// refused with ErrPrecision, and so is a score above MaxScore, a score with
// more fraction digits than Decimals, or an Accumulate total beyond
// MaxScore (the last two beyond MaxScore match ErrInvalidScore too). The
// constructors refuse settings that leave under one year, and, with
// Decimals, an M of 2^51 or more, where a float64 score cannot hold every
// S / 10^Decimals.
//
// Every added decimal or digit of MaxScore divides the horizon by ten:
//
//	MaxScore   Decimals  Resolution  slots (H)        horizon
//	1e5        0         1ms         9.0e10           2.85 years
//	1e6        0         1ms         9.0e9            104 days (refused)
//	1e6        0         1s          9.0e9            285 years
//	1e6        2         1s          9.0e7            2.85 years
//	1e9        0         1s          9.0e6            104 days (refused)
//	1e9        0         1m          9.0e6            17.1 years
//	1e12       0         1h          9007             1.03 years
//
// Pick the coarsest Resolution your game can tell apart (players rarely tie
// within a second), the smallest MaxScore that will never be reached, and an
// Epoch just before launch.
type TieBreak interface {
	// Horizon returns the first instant the encoding cannot hold: a
	// submission must be stamped before it.
	Horizon() time.Time

	// encoding keeps implementations inside the package: a composite that
	// is not exact in float64 would silently corrupt ranks.
	encoding() *composite
}

// TimeOrder describes the range a tie-break encoding must hold exactly.
type TimeOrder struct {
	// Epoch is the earliest time a submission may carry. Times are cut to
	// the microsecond (see WithTime): a time in the Epoch's microsecond but
	// before the Epoch counts as the Epoch (slot 0). Slots are counted from
	// the Epoch itself.
	Epoch time.Time
	// Resolution is the smallest time difference that still orders two
	// submissions, e.g. time.Second.
	Resolution time.Duration
	// MaxScore is the largest absolute score the board accepts.
	MaxScore float64
	// Decimals is how many fraction digits of a score are kept exactly; 0 for
	// whole-number scores.
	Decimals int
}

// EarlierFirst returns a tie-break under which, among equal scores, the member
// who reached the score first ranks higher, on HighestFirst and LowestFirst
// boards alike. It returns ErrPrecision when the settings leave under one
// year of horizon, when MaxScore is below one step of Decimals (0.001
// with 2 decimals: no score but 0 would fit), or when, with Decimals,
// MaxScore is 2^51 steps or more (a float64 score cannot hold every one:
// such settings leave three slots or fewer), and ErrInvalidArgument for a
// zero Epoch, a Resolution that is not positive, a MaxScore that is not a
// positive finite number (NaN and +Inf included), or Decimals outside
// 0..15.
func EarlierFirst(o TimeOrder) (TieBreak, error) { return tieBreak(newComposite(o, false)) }

// LaterFirst returns a tie-break under which, among equal scores, the member
// who reached the score last ranks higher. Errors as for EarlierFirst.
func LaterFirst(o TimeOrder) (TieBreak, error) { return tieBreak(newComposite(o, true)) }

// tieBreak keeps a failed constructor's nil *composite from becoming a
// non-nil TieBreak.
func tieBreak(c *composite, err error) (TieBreak, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}

// maxExact is 2^53: every integer of at most this magnitude is a float64.
const maxExact = 1 << 53

// maxPlain is 2^51: with Decimals, every scaled score below it, divided by
// 10^Decimals as a float64, scales back to itself (see newComposite).
const maxPlain = 1 << 51

// composite is the one TieBreak implementation.
type composite struct {
	order TimeOrder
	later bool    // LaterFirst
	scale float64 // 10^Decimals
	maxS  int64   // M: the largest |S|
	slots int64   // H
	// earliest is the Epoch cut to the microsecond, as every stamp is
	// (WithTime, the board's clock): the earliest stamp taken, in the first
	// slot. Slots count from the Epoch itself, as they always have: a
	// board's stored values must not change with the SDK's version (a
	// rolling deploy writes with both; Verify compares them exactly).
	earliest time.Time
	horizon  time.Time
}

func newComposite(o TimeOrder, later bool) (*composite, error) {
	rule := "EarlierFirst"
	if later {
		rule = "LaterFirst"
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalidArgument, rule}, args...)...)
	}
	switch {
	case o.Epoch.IsZero():
		return nil, bad("Epoch is zero; set it to a time just before the first submission")
	case o.Resolution <= 0:
		return nil, bad("Resolution %v must be positive", o.Resolution)
	case !(o.MaxScore > 0) || math.IsInf(o.MaxScore, 0):
		return nil, bad("MaxScore %v must be positive and finite", o.MaxScore)
	case o.Decimals < 0 || o.Decimals > 15:
		return nil, bad("Decimals %d must be in 0..15", o.Decimals)
	}
	c := &composite{order: o, later: later, scale: math.Pow10(o.Decimals)}
	m := math.Round(o.MaxScore * c.scale)
	if m/c.scale > o.MaxScore {
		m-- // MaxScore has more decimals than kept: the largest S within it
	}
	if m < 1 {
		return nil, fmt.Errorf("%w: %s: MaxScore %v is below one step of %d decimals (%v): the board could hold no score but 0",
			ErrPrecision, rule, o.MaxScore, o.Decimals, 1/c.scale)
	}
	if m+1 >= maxExact {
		return nil, fmt.Errorf("%w: %s: MaxScore %v with %d decimals is %v steps, which leaves no room for time below 2^53",
			ErrPrecision, rule, o.MaxScore, o.Decimals, m)
	}
	if o.Decimals > 0 && m >= maxPlain {
		// Reads report S / 10^Decimals as a float64, and scaled takes
		// such a score back to S. Below 2^51 steps that round trip is
		// exact (the float64 division and product each stray by at most
		// a 2^-53 part: under half a step); from there a score of
		// Decimals digits can be refused as having more, and two totals
		// can read as one score.
		return nil, fmt.Errorf("%w: %s: MaxScore %v with %d decimals is %v steps, past 2^51: a float64 score does not hold every one of them",
			ErrPrecision, rule, o.MaxScore, o.Decimals, m)
	}
	c.maxS = int64(m)
	c.slots = maxExact / (c.maxS + 1)
	// Slots past what a time.Duration can span (292 years) are never used;
	// dropping them keeps the horizon a representable time.
	c.slots = min(c.slots, math.MaxInt64/int64(o.Resolution))
	c.earliest = o.Epoch.Truncate(time.Microsecond)
	c.horizon = o.Epoch.Add(time.Duration(c.slots) * o.Resolution)
	if year := o.Epoch.AddDate(1, 0, 0); c.horizon.Before(year) {
		return nil, fmt.Errorf("%w: %s: MaxScore %v with %d decimals leaves %d slots of %v beside the score under 2^53, a horizon of %v (until %v), under one year: use a coarser Resolution, fewer Decimals or a smaller MaxScore",
			ErrPrecision, rule, o.MaxScore, o.Decimals, c.slots, o.Resolution, c.horizon.Sub(o.Epoch).Round(time.Hour), c.horizon.UTC().Format(time.RFC3339))
	}
	return c, nil
}

// Horizon returns the first instant the encoding cannot hold.
func (c *composite) Horizon() time.Time { return c.horizon }

func (c *composite) encoding() *composite { return c }

// String describes the encoding, for logs.
func (c *composite) String() string {
	rule := "EarlierFirst"
	if c.later {
		rule = "LaterFirst"
	}
	return fmt.Sprintf("%s(MaxScore %v, %d decimals, %v slots from %v, horizon %v)",
		rule, c.order.MaxScore, c.order.Decimals, c.order.Resolution,
		c.order.Epoch.UTC().Format(time.RFC3339), c.horizon.UTC().Format(time.RFC3339))
}

// beyondMax is the error of a score or total beyond MaxScore, which msg
// tells: both ErrPrecision (the composite could not hold it) and
// ErrInvalidScore (outside what the board can hold), so that a caller
// checking either sentinel finds it.
func beyondMax(msg string) error {
	return fmt.Errorf("%w: %s (%w)", ErrPrecision, msg, ErrInvalidScore)
}

// scaled returns S for a score, or ErrPrecision when the score is out of
// range (ErrInvalidScore too: beyondMax) or has more fraction digits than
// the encoding keeps.
func (c *composite) scaled(score float64) (int64, error) {
	if math.Abs(score) > c.order.MaxScore {
		return 0, beyondMax(fmt.Sprintf("score %v is beyond MaxScore %v", score, c.order.MaxScore))
	}
	s := math.Round(score * c.scale)
	if s/c.scale != score {
		return 0, fmt.Errorf("%w: score %v has more than %d fraction digits", ErrPrecision, score, c.order.Decimals)
	}
	if math.Abs(s) > float64(c.maxS) {
		return 0, beyondMax(fmt.Sprintf("score %v is beyond MaxScore %v", score, c.order.MaxScore))
	}
	return int64(s), nil
}

// sumOfScaled returns the score of Decimals fraction digits nearest to
// total, a float64 sum of such scores: an exact sum has no more digits,
// and each float64 addition strays from it by at most a 2^-53 part of
// MaxScore, an H-th of a step (the slots: (M+1) x H <= 2^53). So the
// nearest is the exact sum for a sum of fewer than H/2 scores whatever
// they are, and in practice of far more; past that, on a tie-break of few
// slots, it can be a step off (README "Guards").
func (c *composite) sumOfScaled(total float64) float64 {
	return math.Round(total*c.scale) / c.scale
}

// slot returns T for a time, or ErrPrecision outside Epoch .. horizon.
func (c *composite) slot(t time.Time) (int64, error) {
	if t.Before(c.earliest) || !t.Before(c.horizon) {
		return 0, fmt.Errorf("%w: time %v is outside the tie-break's range [%v, %v)", ErrPrecision,
			t.UTC().Format(time.RFC3339Nano), c.order.Epoch.UTC().Format(time.RFC3339Nano), c.horizon.UTC().Format(time.RFC3339Nano))
	}
	if t.Before(c.order.Epoch) {
		return 0, nil // in the Epoch's microsecond
	}
	return int64(t.Sub(c.order.Epoch) / c.order.Resolution), nil
}

// reversed reports whether the tie part stores H−1−T rather than T: when a
// smaller T must give a larger C.
func (c *composite) reversed(high bool) bool { return high != c.later }

// encode packs S and T. Both must come from scaled and slot.
func (c *composite) encode(s, t int64, high bool) float64 {
	tie := t
	if c.reversed(high) {
		tie = c.slots - 1 - t
	}
	return float64(s*c.slots + tie)
}

// split cuts a stored composite into its scaled score and its tie part
// (0..slots-1), floored as split in common.lua cuts it.
func (c *composite) split(v float64) (s, tie int64) {
	n := int64(v) // exact: every stored composite is an integer below 2^53
	s, tie = n/c.slots, n%c.slots
	if tie < 0 { // Go truncates toward zero; the encoding floors
		s, tie = s-1, tie+c.slots
	}
	return s, tie
}

// decode unpacks a stored composite into the plain score and the time slot.
func (c *composite) decode(v float64, high bool) (score float64, t int64) {
	s, tie := c.split(v)
	t = tie
	if c.reversed(high) {
		t = c.slots - 1 - tie
	}
	return float64(s) / c.scale, t
}

// plain returns the score a stored value stands for.
func (lb *Leaderboard) plain(v float64) float64 {
	if lb.tb == nil {
		return v
	}
	s, _ := lb.tb.decode(v, lb.high())
	return s
}

// holdsScoreIn reports whether shard i of bounds (its plain scores from
// bounds[i-1], below bounds[i]) holds a score the encoding stores: the
// least such score at or above bounds[i-1], compared as shardOf compares
// a stored value's plain score with a bound, lies below bounds[i].
func (c *composite) holdsScoreIn(bounds []float64, i int) bool {
	m := float64(c.maxS)
	s := -m // scaled: the least storable score in the shard, if any
	if i > 0 {
		lo := bounds[i-1]
		if lo > m/c.scale {
			return false
		}
		if lo > s/c.scale {
			s = math.Ceil(lo * c.scale)
			for s/c.scale < lo {
				s++
			}
			for (s-1)/c.scale >= lo {
				s--
			}
		}
	}
	return s <= m && (i == len(bounds) || s/c.scale < bounds[i])
}
