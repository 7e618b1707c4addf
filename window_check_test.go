package leaderboard_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// badWindow is a user's window gone wrong in one of the ways New checks.
type badWindow struct{ fault string }

func (badWindow) Name() string { return "bad" }

func (w badWindow) Period(t time.Time) lb.Period {
	start := t.Truncate(time.Hour)
	p := lb.Period{ID: start.UTC().Format("2006010215"), Start: start, End: start.Add(time.Hour)}
	switch w.fault {
	case "later":
		p.Start, p.End = p.Start.Add(2*time.Hour), p.End.Add(2*time.Hour)
	case "empty":
		p.End = p.Start
	case "ends before it starts":
		p.End = p.Start.Add(-time.Hour)
	case "starts later, never ends":
		p.Start, p.End = t.Add(time.Hour), time.Time{}
	case "stuck":
		p = lb.Period{ID: "p", Start: future.Add(-time.Hour), End: future.Add(time.Hour)}
	case "one ID":
		p.ID = "p"
	case "overlapping":
		p.End = p.Start.Add(2 * time.Hour)
	case "gap":
		if t.Sub(start) < 30*time.Minute {
			p.End = start.Add(30 * time.Minute)
		} else {
			p.Start = start.Add(40 * time.Minute)
		}
	case "bad ID":
		p.ID = "a:b"
	case "empty ID":
		p.ID = ""
	}
	return p
}

// TestNewRefusesBrokenWindows: a window whose period of the board's now
// does not hold it, or whose neighbouring periods do not tile with it
// (the period holding its End starts there, the one just before its Start
// ends there, each under another ID), was taken by New; Submit then wrote
// a score that Rebuild, Remove, Delete and Verify could not walk to, or
// failed on every call. New now asks the window about now and the two
// periods around it, and refuses it.
func TestNewRefusesBrokenWindows(t *testing.T) {
	b := testredis.Mini(t)
	clock := lb.WithClock(fixed(future.Add(10 * time.Minute)))
	for _, fault := range []string{"later", "empty", "ends before it starts", "starts later, never ends",
		"stuck", "one ID", "overlapping", "gap", "bad ID", "empty ID"} {
		refusedByNew(t, b, fault, lb.WithWindows(badWindow{fault}), clock)
		refusedByNew(t, b, fault+" (second window)", lb.WithWindows(lb.Daily(), badWindow{fault}), clock)
	}
	refusedByNew(t, b, "gap, clock in the later part", lb.WithWindows(badWindow{"gap"}), lb.WithClock(fixed(future.Add(50*time.Minute))))
	refusedByNew(t, b, "claims before its start", lb.WithWindows(lastSeason{start: future, claims: true}), lb.WithClock(fixed(future.Add(-48*time.Hour))))
}

// TestNewTakesEveryGoodWindow: the checks New makes hold for the built-in
// windows in any zone, at any instant (DST changes, the last period a
// time.Time holds), and for users' windows of uneven periods, of a first
// period without a Start, of a last one without an End.
func TestNewTakesEveryGoodWindow(t *testing.T) {
	b := testredis.Mini(t)
	var zones []*time.Location
	for _, z := range []string{"Europe/Berlin", "America/Santiago", "Asia/Beirut", "America/Moncton", "Pacific/Apia", "Australia/Lord_Howe"} {
		loc, err := time.LoadLocation(z)
		require.NoError(t, err)
		zones = append(zones, loc)
	}
	windows := []lb.Window{lb.AllTime(), lb.Daily(), lb.Weekly(), lb.Monthly(), badWindow{}, secondWindow{}, minuteWindow{},
		tenDaySeason{start: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}, centuries{}, seasonWindow{b1: future}}
	for _, loc := range zones {
		windows = append(windows, lb.DailyIn(loc), lb.WeeklyIn(loc), lb.MonthlyIn(loc))
	}
	builtin := map[string]any{"alltime": 1, "daily": 1, "weekly": 1, "monthly": 1}
	last := time.Unix(math.MaxInt64-62135596800, 999999999).UTC()
	instants := []time.Time{future, future.Add(-time.Nanosecond), time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 25, 0, 59, 59, 0, time.UTC), time.Date(2006, 10, 29, 3, 59, 0, 0, time.UTC),
		time.Date(2011, 12, 30, 10, 0, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		last.AddDate(0, -1, -10), last.AddDate(0, -1, -5), last.Add(-time.Hour), last}
	for _, w := range windows {
		for _, at := range instants {
			if at.Year() > 9999 && builtin[w.Name()] == nil {
				continue // a user's arithmetic may overflow there: its own concern
			}
			takenByNew(t, b, w.Name()+" at "+at.String(), lb.WithWindows(w), lb.WithClock(fixed(at)), lb.WithRetention(0))
		}
	}
	takenByNew(t, b, "a last season without an End", lb.WithWindows(lastSeason{start: future.Add(-time.Hour)}), lb.WithClock(fixed(future)))
	takenByNew(t, b, "a first season without a Start", lb.WithWindows(lastSeason{start: future.Add(time.Hour)}), lb.WithClock(fixed(future)))
}

// unixSecond is a window of one-second periods named by their Unix time.
type unixSecond struct{}

func (unixSecond) Name() string { return "sec" }

func (unixSecond) Period(t time.Time) lb.Period {
	start := t.Truncate(time.Second)
	return lb.Period{ID: strconv.FormatInt(start.Unix(), 10), Start: start, End: start.Add(time.Second)}
}

// TestNewRefusesRetentionPastTheWalk: the walks over a window's readable
// periods (Periods, Remove, Delete, Rebuild, Seal, Verify) list at most
// 1,000,000 of them, the current one among them. New refused a retention
// of 1,000,000 periods or more, and took one just under it, which keeps
// the current period and 1,000,000 closed ones readable: every walk then
// refused the board.
func TestNewRefusesRetentionPastTheWalk(t *testing.T) {
	b := testredis.Mini(t)
	clock := lb.WithClock(fixed(future.Add(time.Millisecond)))
	for _, keep := range []time.Duration{999_999*time.Second + time.Millisecond, 999_999*time.Second + 500*time.Millisecond, 1_000_000 * time.Second} {
		refusedByNew(t, b, keep.String(), lb.WithWindows(unixSecond{}), lb.WithRetention(keep), clock)
	}
	takenByNew(t, b, "999,999 periods", lb.WithWindows(unixSecond{}), lb.WithRetention(999_999*time.Second), clock)
}
