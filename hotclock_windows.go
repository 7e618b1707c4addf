package leaderboard

// hotCoarseClock: Windows's monotonic clock (the interrupt time Go reads)
// moves in ticks of 1 to 15.6 ms, so a snapshot would answer alone for up
// to a tick, not hotRecheck: there every read asks the cache.
const hotCoarseClock = true
