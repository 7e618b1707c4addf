package leaderboard

import (
	"fmt"
	"time"
)

// TieBreak orders members with equal scores by when they reached the score,
// by packing (score, time) into one float64 whose order is the board's order.
// Build one with EarlierFirst or LaterFirst.
type TieBreak interface {
	// tieBreak keeps implementations inside the package: a composite encoding
	// that is not exact in float64 would silently corrupt ranks.
	tieBreak()
}

// TimeOrder describes the range a tie-break encoding must hold exactly.
type TimeOrder struct {
	// Epoch is the earliest time a submission may carry.
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

// errTieBreakUnsupported is returned until the tie-break encoders land.
var errTieBreakUnsupported = fmt.Errorf("%w: tie-breaks are not yet supported", ErrInvalidArgument)

// EarlierFirst returns a tie-break under which, among equal scores, the member
// who reached the score first ranks higher.
//
// Not yet supported: it returns an error matching ErrInvalidArgument.
func EarlierFirst(o TimeOrder) (TieBreak, error) {
	return nil, errTieBreakUnsupported
}

// LaterFirst returns a tie-break under which, among equal scores, the member
// who reached the score last ranks higher.
//
// Not yet supported: it returns an error matching ErrInvalidArgument.
func LaterFirst(o TimeOrder) (TieBreak, error) {
	return nil, errTieBreakUnsupported
}
