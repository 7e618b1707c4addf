package leaderboard

import (
	"fmt"
	"time"

	"github.com/redis/rueidis"
)

// A windowed key's expiry is an absolute time from the board's clock;
// Redis expires by its own. A write whose expiry Redis's clock has passed
// (a board clock behind the server's: WithClock, a replay) sees its key
// deleted as it sets the expiry. The scripts tell it by expire_gone
// (writes.lua); the transactions here, by the same two commands.

// closeWindow reports a window Closed: its period had expired when the
// submission came, by the board's clock (submitTargets) or by Redis's own,
// which deletes the period's key as soon as a write sets an expiry its
// clock has passed (a board clock behind the server's: WithClock). Either
// way the period holds nothing of it and the window reports no standing.
func closeWindow(wr *WindowResult, member string) {
	*wr = WindowResult{Window: wr.Window, Period: wr.Period, Previous: Entry{Member: member}, Closed: true}
}

// expiredByRedis is the error of a write (Set) to tg's period that Redis
// deleted as the write set its expiry: Redis's clock had passed it.
func expiredByRedis(tg target) error {
	return fmt.Errorf("%w: window %q, period %q: Redis's clock had passed its retention end %v (the board's clock is behind the server's)",
		ErrExpired, tg.window.Name(), tg.period.ID, time.UnixMilli(tg.expire).UTC().Format(time.RFC3339))
}

// expireGone is the commands that set key's absolute expiry (unix ms,
// non-zero) in a transaction and then tell whether Redis deleted the key
// as they did; their two replies go to goneAfter.
func expireGone(b rueidis.Builder, key string, expire int64) rueidis.Commands {
	return rueidis.Commands{b.Pexpireat().Key(key).MillisecondsTimestamp(expire).Build(), b.Exists().Key(key).Build()}
}

// goneAfter reads expireGone's replies, at replies[at] and after: PEXPIREAT
// found the key, and EXISTS then did not.
func goneAfter(replies []rueidis.RedisMessage, at int) (bool, error) {
	if len(replies) < at+2 {
		return false, fmt.Errorf("expiry: %d replies, want %d", len(replies), at+2)
	}
	set, err := replies[at].AsInt64()
	if err != nil {
		return false, err
	}
	left, err := replies[at+1].AsInt64()
	return set == 1 && left == 0, err
}
