package leaderboard

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// HotKey is the key of the top mirror of the default window's current
// period.
func HotKey(lb *Leaderboard) string {
	tg, err := lb.read(nil)
	if err != nil {
		panic(err)
	}
	return lb.hotKey(tg)
}

// HotPut puts members with their stored values into the top mirror of the
// default window's current period as hot_put.lua does for a sharded
// Cluster board's reader whose turn is turn, and returns the script's
// answer (1 put, 0 refused): tests play a reader that read before a write.
func HotPut(ctx context.Context, lb *Leaderboard, turn int64, members, values []string) (int64, error) {
	tg, err := lb.read(nil)
	if err != nil {
		return 0, err
	}
	return scripts.HotPutCall(lb.readHeader(), lb.hotKey(tg), lb.keys.HotTurn(tg.window.Name(), tg.period.ID),
		turn, hotTTL.Milliseconds(), lb.hot.k, tg.expire, members, values).Exec(ctx, lb.client).AsInt64()
}

// UnlinkChunk is about the most keys one DoMulti of a sharded board's
// Delete or Reset names.
const UnlinkChunk = unlinkChunk

// HotSnaps is how many snapshots of top mirrors the board's process keeps
// (WithHotTop; 0 without one).
func HotSnaps(lb *Leaderboard) int {
	if lb.hot == nil {
		return 0
	}
	n := 0
	lb.hot.snaps.Range(func(_, _ any) bool { n++; return true })
	return n
}

// HotRecheck is how long a snapshot the cache confirmed answers alone.
const HotRecheck = hotRecheck

// HotCoarseClock reports a platform where no snapshot answers alone.
const HotCoarseClock = hotCoarseClock

// StopHotClock stops the clock by which lb's hot top times its snapshots
// (hotRecheck), HotRecheck ahead of the clock's time so that no read
// before counts, and returns a function that moves it on by d.
func StopHotClock(lb *Leaderboard) (advance func(d time.Duration)) {
	var now atomic.Int64
	now.Store(hotMonotonic() + int64(hotRecheck))
	lb.hot.now = now.Load
	return func(d time.Duration) { now.Add(int64(d)) }
}
