//go:build !windows

package leaderboard

// hotCoarseClock reports a monotonic clock too coarse to time hotRecheck
// (see hotclock_windows.go).
const hotCoarseClock = false
