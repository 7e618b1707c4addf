package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Every exported I/O method answers a ctx that has ended, before or
// during the call, with an error that matches the ctx's (errors.Is(err,
// ctx.Err())): it defers endedWith, checks its input (bad input gets its
// sentinel whatever the ctx), then calls notStarted before its first I/O. Neither
// the store nor the network says so reliably: rueidis returns a failed
// dial as the net package gave it, and a dial whose deadline (the ctx's,
// set on the socket) fires before the ctx's own timer is "dial tcp ...:
// i/o timeout", an os.ErrDeadlineExceeded that does not match
// context.DeadlineExceeded; a store may not look at ctx at all, and a hot
// top answers from memory.

// ctxEnd is ctx's error once it has ended: ctx.Err(), or
// context.DeadlineExceeded when its deadline has passed but its timer has
// not fired yet (ctx.Err() is still nil then, for a moment: long enough
// for a dial whose socket deadline fired first to come back).
func ctxEnd(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// notStarted is op's error when ctx has ended before a call starts, and
// nothing is read or written then, in the store or in Redis. A store that
// does not look at ctx before it writes (one in memory, a queue) would
// take a write whose caller has given up, which Redis then refuses: a
// store row and an ErrPending for a call that could not have succeeded.
// And the write's failure would drop its top mirrors (WithHotTop:
// hotFailed) in one more round trip, sent even when ctx has ended, as for
// a write that may have applied.
func notStarted(ctx context.Context, op string) error {
	if err := ctxEnd(ctx); err != nil {
		return wrap(op, err)
	}
	return nil
}

// cutShort is a call's err, made to match ctx's error too when ctx has
// ended, whatever err is (a network error, a store's, a sentinel such as
// ErrPending, which still matches); err's text, which names the
// operation, comes first.
func cutShort(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	cause := ctxEnd(ctx)
	if cause == nil || errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w (%w)", err, cause)
}

// endedWith is cutShort for an exported method's named error, deferred.
func endedWith(ctx context.Context, err *error) {
	*err = cutShort(ctx, *err)
}

// pause waits d, or until ctx ends (its error then): the pause before a
// refused command is sent again (wait), or between Check's confirming reads.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
