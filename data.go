package leaderboard

import (
	"context"
)

// SetData sets member's data (see WithData) without touching any score; ""
// clears it. A member needs no score to hold data: set it before the first
// submission, or keep it beside scores that come and go. Data lives in
// Redis alone: a store does not record it, so a Rebuild after Redis lost
// the board finds none (set it again from where names live, such as your
// accounts service). A bad member returns ErrInvalidMember (one the store
// cannot hold too, as Submit: see SubmissionChecker), data longer than
// MaxDataLen ErrInvalidArgument; nothing is written then. One round trip:
// one HSET (HDEL for ""), in the board's data hash, or on a sharded board
// in the member's partition's.
func (lb *Leaderboard) SetData(ctx context.Context, member, data string) (err error) {
	defer endedWith(ctx, &err)
	if err := checkMember(member); err != nil {
		return err
	}
	if err := checkData(data); err != nil {
		return err
	}
	// Data of a member the store cannot hold would be data of a member
	// that can never score here: refused as a Submit's member is.
	if err := lb.memberRefused(member, lb.now()); err != nil {
		return storeErr("set data", err)
	}
	if err := notStarted(ctx, "set data"); err != nil {
		return err
	}
	key := lb.be.dataKey(member)
	b := lb.client.B()
	if data == "" {
		return wrap("set data", lb.client.Do(ctx, b.Hdel().Key(key).Field(member).Build()).Error())
	}
	return wrap("set data", lb.client.Do(ctx, b.Hset().Key(key).FieldValue().FieldValue(member, data).Build()).Error())
}
