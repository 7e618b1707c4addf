package leaderboard

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	_ "time/tzdata" // the DST tests must not depend on the machine's zoneinfo

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// winZoneNames are the zones the property, brute-force and fuzz tests run in.
// Besides the usual ones: Lord_Howe moves by 30 minutes, Santiago and Havana
// jump over midnight, Kolkata and Chatham have odd offsets, Apia skipped a
// whole date (2011-12-30) and Moncton's local date stepped backwards every
// autumn until 2006 (00:01 ADT fell back to 23:01 AST).
var winZoneNames = []string{
	"UTC",
	"Europe/Berlin",
	"America/New_York",
	"Australia/Lord_Howe",
	"America/Santiago",
	"Asia/Kolkata",
	"Pacific/Chatham",
	"America/Havana",
	"Pacific/Apia",
	"America/Moncton",
}

var winZones = func() []*time.Location {
	locs := make([]*time.Location, len(winZoneNames))
	for i, name := range winZoneNames {
		loc, err := time.LoadLocation(name)
		if err != nil {
			panic(err) // time/tzdata is linked in, so this cannot happen
		}
		locs[i] = loc
	}
	return locs
}()

func winLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func winWindowsIn(loc *time.Location) []Window {
	return []Window{DailyIn(loc), WeeklyIn(loc), MonthlyIn(loc)}
}

// winUTC parses an RFC 3339 instant, nanoseconds allowed.
func winUTC(t testing.TB, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return at
}

// winExpectedID formats the ID of the period keyed by a local date with fmt,
// independently of the hand-rolled formatting in window.go.
func winExpectedID(name string, at time.Time) string {
	switch name {
	case "weekly":
		y, w := at.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case "monthly":
		return fmt.Sprintf("%04d-%02d", at.Year(), int(at.Month()))
	default:
		return fmt.Sprintf("%04d-%02d-%02d", at.Year(), int(at.Month()), at.Day())
	}
}

// winCheckPeriod checks every invariant a calendar window promises for the
// instant at, in a form usable from property tests and the fuzzer.
func winCheckPeriod(w Window, loc *time.Location, at time.Time) error {
	p := w.Period(at)
	where := func(format string, args ...any) error {
		return fmt.Errorf("%s in %s at %s (%s local): period %s [%s, %s): %s",
			w.Name(), loc, at.UTC().Format(time.RFC3339Nano), at.In(loc).Format(time.RFC3339Nano),
			p.ID, p.Start.Format(time.RFC3339), p.End.Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
	if p.Start.After(at) || !at.Before(p.End) {
		return where("does not hold the instant")
	}
	if p.Start.Location() != loc || p.End.Location() != loc {
		return where("bounds in %s and %s", p.Start.Location(), p.End.Location())
	}
	if d := p.End.Sub(p.Start); d <= 0 || d > 32*24*time.Hour {
		return where("implausible length %s", d)
	}
	// Start's local date is the period's key date, so the ID follows from it.
	if want := winExpectedID(w.Name(), p.Start.In(loc)); p.ID != want {
		return where("ID should be %s from its start", want)
	}
	// The local date of at names the period, except where the local date
	// steps backwards: then at can only belong to a later period.
	if own := winExpectedID(w.Name(), at.In(loc)); own > p.ID {
		return where("ID is before the local date's %s", own)
	}
	if q := w.Period(p.Start); q.ID != p.ID || !q.Start.Equal(p.Start) || !q.End.Equal(p.End) {
		return where("Period(Start) is %s [%s, %s)", q.ID, q.Start, q.End)
	}
	if q := w.Period(p.End.Add(-time.Nanosecond)); q.ID != p.ID {
		return where("Period(End-1ns) is %s", q.ID)
	}
	next := w.Period(p.End)
	if !next.Start.Equal(p.End) {
		return where("next period %s starts at %s, not at End", next.ID, next.Start)
	}
	if next.ID <= p.ID {
		return where("next period's ID %s does not sort after", next.ID)
	}
	return nil
}

func TestWindowNames(t *testing.T) {
	berlin := winLoad(t, "Europe/Berlin")
	for _, tc := range []struct {
		w    Window
		name string
	}{
		{AllTime(), "alltime"},
		{Daily(), "daily"},
		{Weekly(), "weekly"},
		{Monthly(), "monthly"},
		{DailyIn(berlin), "daily"},
		{WeeklyIn(berlin), "weekly"},
		{MonthlyIn(berlin), "monthly"},
	} {
		assert.Equal(t, tc.name, tc.w.Name())
	}
}

func TestAllTime(t *testing.T) {
	for _, at := range []time.Time{{}, time.Unix(0, 0), time.Now(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
		p := AllTime().Period(at)
		assert.Equal(t, Period{ID: "alltime"}, p)
		assert.True(t, p.Start.IsZero())
		assert.True(t, p.End.IsZero())
	}
}

func TestNilLocationIsUTC(t *testing.T) {
	at := winUTC(t, "2026-11-30T23:30:00Z")
	for i, w := range []Window{DailyIn(nil), WeeklyIn(nil), MonthlyIn(nil)} {
		want := []Window{Daily(), Weekly(), Monthly()}[i].Period(at)
		got := w.Period(at)
		assert.Equal(t, want, got)
		assert.Equal(t, time.UTC, got.Start.Location())
	}
}

func TestNamed(t *testing.T) {
	berlin := winLoad(t, "Europe/Berlin")
	local := Named("daily-berlin", DailyIn(berlin))
	assert.Equal(t, "daily-berlin", local.Name())
	assert.Equal(t, "daily", Daily().Name(), "the wrapped window keeps its own name")

	// 23:30 UTC is already the next day in Berlin, so the two differ.
	at := winUTC(t, "2026-11-30T23:30:00Z")
	assert.Equal(t, DailyIn(berlin).Period(at), local.Period(at))
	assert.Equal(t, "2026-12-01", local.Period(at).ID)
	assert.Equal(t, "2026-11-30", Daily().Period(at).ID)

	renamed := Named("outer", Named("inner", Weekly()))
	assert.Equal(t, "outer", renamed.Name())
	assert.Equal(t, Weekly().Period(at), renamed.Period(at))

	assert.Equal(t, "", Named("", AllTime()).Name(), "Named does not validate")
}

func TestWeeklyISOEdges(t *testing.T) {
	for _, tc := range []struct {
		at, id, start, end string
	}{
		{"2026-11-30T00:00:00Z", "2026-W49", "2026-11-30", "2026-12-07"},
		{"2026-12-06T23:59:59.999999999Z", "2026-W49", "2026-11-30", "2026-12-07"},
		{"2026-12-28T00:00:00Z", "2026-W53", "2026-12-28", "2027-01-04"},
		{"2027-01-01T12:00:00Z", "2026-W53", "2026-12-28", "2027-01-04"},
		{"2027-01-03T23:59:59.999999999Z", "2026-W53", "2026-12-28", "2027-01-04"},
		{"2027-01-04T00:00:00Z", "2027-W01", "2027-01-04", "2027-01-11"},
		{"2020-12-31T08:00:00Z", "2020-W53", "2020-12-28", "2021-01-04"},
		{"2021-01-03T23:00:00Z", "2020-W53", "2020-12-28", "2021-01-04"},
		{"2021-01-04T00:00:00Z", "2021-W01", "2021-01-04", "2021-01-11"},
		{"2019-12-31T00:00:00Z", "2020-W01", "2019-12-30", "2020-01-06"},
		{"2028-02-29T12:00:00Z", "2028-W09", "2028-02-28", "2028-03-06"},
	} {
		t.Run(tc.at, func(t *testing.T) {
			p := Weekly().Period(winUTC(t, tc.at))
			assert.Equal(t, tc.id, p.ID)
			assert.Equal(t, winUTC(t, tc.start+"T00:00:00Z"), p.Start)
			assert.Equal(t, winUTC(t, tc.end+"T00:00:00Z"), p.End)
			assert.Equal(t, time.Monday, p.Start.Weekday())
		})
	}
}

func TestDailyAndMonthlyBoundaries(t *testing.T) {
	for _, tc := range []struct {
		w              Window
		at             string
		id, start, end string
	}{
		{Daily(), "2026-11-30T00:00:00Z", "2026-11-30", "2026-11-30", "2026-12-01"},
		{Daily(), "2026-11-30T23:59:59.999999999Z", "2026-11-30", "2026-11-30", "2026-12-01"},
		{Daily(), "2026-12-01T00:00:00Z", "2026-12-01", "2026-12-01", "2026-12-02"},
		{Daily(), "2026-12-31T23:59:59Z", "2026-12-31", "2026-12-31", "2027-01-01"},
		{Daily(), "2027-02-28T12:00:00Z", "2027-02-28", "2027-02-28", "2027-03-01"},
		{Daily(), "2028-02-28T23:59:59Z", "2028-02-28", "2028-02-28", "2028-02-29"},
		{Daily(), "2028-02-29T12:00:00Z", "2028-02-29", "2028-02-29", "2028-03-01"},
		// The window's zone decides, not the instant's.
		{Daily(), "2026-12-01T01:00:00+02:00", "2026-11-30", "2026-11-30", "2026-12-01"},
		{Monthly(), "2026-11-30T23:59:59.999999999Z", "2026-11", "2026-11-01", "2026-12-01"},
		{Monthly(), "2026-12-01T00:00:00Z", "2026-12", "2026-12-01", "2027-01-01"},
		{Monthly(), "2026-12-31T23:59:59Z", "2026-12", "2026-12-01", "2027-01-01"},
		{Monthly(), "2027-01-01T00:00:00Z", "2027-01", "2027-01-01", "2027-02-01"},
		{Monthly(), "2027-02-15T00:00:00Z", "2027-02", "2027-02-01", "2027-03-01"},
		{Monthly(), "2028-02-29T12:00:00Z", "2028-02", "2028-02-01", "2028-03-01"},
	} {
		t.Run(tc.w.Name()+"/"+tc.at, func(t *testing.T) {
			p := tc.w.Period(winUTC(t, tc.at))
			assert.Equal(t, tc.id, p.ID)
			assert.Equal(t, winUTC(t, tc.start+"T00:00:00Z"), p.Start)
			assert.Equal(t, winUTC(t, tc.end+"T00:00:00Z"), p.End)
			assert.Equal(t, time.UTC, p.Start.Location())
			assert.Equal(t, time.UTC, p.End.Location())
		})
	}
}

// winLocalCase pins the period holding an instant (given in UTC) to exact
// bounds (given in UTC), and optionally its length.
type winLocalCase struct {
	at, id, start, end string
	length             time.Duration
}

func winRunLocalCases(t *testing.T, w Window, loc *time.Location, cases []winLocalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(w.Name()+"/"+tc.at, func(t *testing.T) {
			at := winUTC(t, tc.at)
			p := w.Period(at)
			assert.Equal(t, tc.id, p.ID, "local time %s", at.In(loc))
			assert.True(t, winUTC(t, tc.start).Equal(p.Start), "start %s, want %s", p.Start, tc.start)
			assert.True(t, winUTC(t, tc.end).Equal(p.End), "end %s, want %s", p.End, tc.end)
			if tc.length != 0 {
				assert.Equal(t, tc.length, p.End.Sub(p.Start))
			}
			assert.Equal(t, loc, p.Start.Location())
			require.NoError(t, winCheckPeriod(w, loc, at))
		})
	}
}

func TestDSTBerlin(t *testing.T) {
	berlin := winLoad(t, "Europe/Berlin")
	// 2027-03-28: 02:00 CET becomes 03:00 CEST (01:00 UTC).
	// 2027-10-31: 03:00 CEST becomes 02:00 CET (01:00 UTC).
	spring := "2027-03-27T23:00:00Z" // 2027-03-28 00:00 CET
	springEnd := "2027-03-28T22:00:00Z"
	autumn := "2027-10-30T22:00:00Z" // 2027-10-31 00:00 CEST
	autumnEnd := "2027-10-31T23:00:00Z"
	winRunLocalCases(t, DailyIn(berlin), berlin, []winLocalCase{
		{"2027-03-27T22:59:59.999999999Z", "2027-03-27", "2027-03-26T23:00:00Z", spring, 24 * time.Hour},
		{spring, "2027-03-28", spring, springEnd, 23 * time.Hour},
		{"2027-03-28T00:59:59.999999999Z", "2027-03-28", spring, springEnd, 23 * time.Hour}, // 01:59:59 CET
		{"2027-03-28T01:00:00Z", "2027-03-28", spring, springEnd, 23 * time.Hour},           // 03:00 CEST
		{"2027-03-28T21:59:59.999999999Z", "2027-03-28", spring, springEnd, 23 * time.Hour},
		{springEnd, "2027-03-29", springEnd, "2027-03-29T22:00:00Z", 24 * time.Hour},
		{"2027-10-30T21:59:59.999999999Z", "2027-10-30", "2027-10-29T22:00:00Z", autumn, 24 * time.Hour},
		{autumn, "2027-10-31", autumn, autumnEnd, 25 * time.Hour},
		{"2027-10-31T00:30:00Z", "2027-10-31", autumn, autumnEnd, 25 * time.Hour}, // 02:30 CEST
		{"2027-10-31T01:30:00Z", "2027-10-31", autumn, autumnEnd, 25 * time.Hour}, // 02:30 CET, again
		{"2027-10-31T22:59:59.999999999Z", "2027-10-31", autumn, autumnEnd, 25 * time.Hour},
		{autumnEnd, "2027-11-01", autumnEnd, "2027-11-01T23:00:00Z", 24 * time.Hour},
	})
	winRunLocalCases(t, WeeklyIn(berlin), berlin, []winLocalCase{
		{"2027-03-28T12:00:00Z", "2027-W12", "2027-03-21T23:00:00Z", springEnd, 7*24*time.Hour - time.Hour},
		{"2027-10-31T12:00:00Z", "2027-W43", "2027-10-24T22:00:00Z", autumnEnd, 7*24*time.Hour + time.Hour},
	})
	winRunLocalCases(t, MonthlyIn(berlin), berlin, []winLocalCase{
		{"2027-03-28T12:00:00Z", "2027-03", "2027-02-28T23:00:00Z", "2027-03-31T22:00:00Z", 31*24*time.Hour - time.Hour},
		{"2027-10-31T12:00:00Z", "2027-10", "2027-09-30T22:00:00Z", "2027-10-31T23:00:00Z", 31*24*time.Hour + time.Hour},
	})
}

func TestDSTNewYork(t *testing.T) {
	ny := winLoad(t, "America/New_York")
	// 2027-03-14 02:00 EST becomes 03:00 EDT; 2027-11-07 02:00 EDT becomes 01:00 EST.
	winRunLocalCases(t, DailyIn(ny), ny, []winLocalCase{
		{"2027-03-14T04:59:59Z", "2027-03-13", "2027-03-13T05:00:00Z", "2027-03-14T05:00:00Z", 24 * time.Hour},
		{"2027-03-14T06:59:59Z", "2027-03-14", "2027-03-14T05:00:00Z", "2027-03-15T04:00:00Z", 23 * time.Hour}, // 01:59:59 EST
		{"2027-03-14T07:00:00Z", "2027-03-14", "2027-03-14T05:00:00Z", "2027-03-15T04:00:00Z", 23 * time.Hour}, // 03:00 EDT
		{"2027-11-07T05:30:00Z", "2027-11-07", "2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z", 25 * time.Hour}, // 01:30 EDT
		{"2027-11-07T06:30:00Z", "2027-11-07", "2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z", 25 * time.Hour}, // 01:30 EST
		{"2027-11-08T04:59:59.999999999Z", "2027-11-07", "2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z", 25 * time.Hour},
	})
	winRunLocalCases(t, WeeklyIn(ny), ny, []winLocalCase{
		// Both changes fall on a Sunday, the last day of an ISO week.
		{"2027-03-10T12:00:00Z", "2027-W10", "2027-03-08T05:00:00Z", "2027-03-15T04:00:00Z", 7*24*time.Hour - time.Hour},
		{"2027-11-07T12:00:00Z", "2027-W44", "2027-11-01T04:00:00Z", "2027-11-08T05:00:00Z", 7*24*time.Hour + time.Hour},
	})
}

// TestDSTAtMidnight covers zones whose clocks change at midnight, where the
// midnight of a date may not exist or may exist twice.
func TestDSTAtMidnight(t *testing.T) {
	santiago := winLoad(t, "America/Santiago")
	// 2027-09-05 00:00 -04 does not exist: Saturday 24:00 becomes Sunday
	// 01:00 -03, so that Sunday starts at 01:00. time.Date resolves the
	// missing midnight to 2027-09-04 23:00 -04, on the previous date.
	// 2027-04-04 00:00 -03 falls back to Saturday 23:00 -04, so that Saturday
	// lasts 25h and Sunday starts at its (single) midnight.
	winRunLocalCases(t, DailyIn(santiago), santiago, []winLocalCase{
		{"2027-09-05T03:59:59.999999999Z", "2027-09-04", "2027-09-04T04:00:00Z", "2027-09-05T04:00:00Z", 24 * time.Hour},
		{"2027-09-05T04:00:00Z", "2027-09-05", "2027-09-05T04:00:00Z", "2027-09-06T03:00:00Z", 23 * time.Hour},
		{"2027-04-04T03:30:00Z", "2027-04-03", "2027-04-03T03:00:00Z", "2027-04-04T04:00:00Z", 25 * time.Hour}, // 00:30 -03 is 23:30 -04
		{"2027-04-04T04:00:00Z", "2027-04-04", "2027-04-04T04:00:00Z", "2027-04-05T04:00:00Z", 24 * time.Hour},
	})
	winRunLocalCases(t, WeeklyIn(santiago), santiago, []winLocalCase{
		{"2027-09-05T12:00:00Z", "2027-W35", "2027-08-30T04:00:00Z", "2027-09-06T03:00:00Z", 7*24*time.Hour - time.Hour},
	})
	winRunLocalCases(t, MonthlyIn(santiago), santiago, []winLocalCase{
		{"2027-09-05T12:00:00Z", "2027-09", "2027-09-01T04:00:00Z", "2027-10-01T03:00:00Z", 30*24*time.Hour - time.Hour},
	})
	start := DailyIn(santiago).Period(winUTC(t, "2027-09-05T12:00:00Z")).Start
	assert.Equal(t, "2027-09-05T01:00:00-03:00", start.Format(time.RFC3339), "first instant of a midnight-less date")

	havana := winLoad(t, "America/Havana")
	// 2027-03-14 00:00 CST becomes 01:00 CDT; 2027-11-07 01:00 CDT becomes
	// 00:00 CST, so that midnight happens twice and the first one counts.
	winRunLocalCases(t, DailyIn(havana), havana, []winLocalCase{
		{"2027-03-14T04:59:59Z", "2027-03-13", "2027-03-13T05:00:00Z", "2027-03-14T05:00:00Z", 24 * time.Hour},
		{"2027-03-14T05:00:00Z", "2027-03-14", "2027-03-14T05:00:00Z", "2027-03-15T04:00:00Z", 23 * time.Hour},
		{"2027-11-07T04:30:00Z", "2027-11-07", "2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z", 25 * time.Hour}, // 00:30 CDT
		{"2027-11-07T05:30:00Z", "2027-11-07", "2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z", 25 * time.Hour}, // 00:30 CST
	})
}

// TestLocalDateGoingBackwards covers America/Moncton in 2005, where 00:01
// ADT on 2005-10-30 fell back to 23:01 AST on 2005-10-29: the hour after
// the change shows the old date again but lies after the new date began, so
// it belongs to the new date's period, which is 25h long.
func TestLocalDateGoingBackwards(t *testing.T) {
	moncton := winLoad(t, "America/Moncton")
	winRunLocalCases(t, DailyIn(moncton), moncton, []winLocalCase{
		{"2005-10-30T02:59:59Z", "2005-10-29", "2005-10-29T03:00:00Z", "2005-10-30T03:00:00Z", 24 * time.Hour},
		{"2005-10-30T03:00:30Z", "2005-10-30", "2005-10-30T03:00:00Z", "2005-10-31T04:00:00Z", 25 * time.Hour}, // 00:00:30 ADT
		{"2005-10-30T03:30:00Z", "2005-10-30", "2005-10-30T03:00:00Z", "2005-10-31T04:00:00Z", 25 * time.Hour}, // 23:30 AST on the 29th
	})
}

// TestSkippedDate covers Pacific/Apia, which went from 2011-12-29 24:00 -10
// straight to 2011-12-31 00:00 +14: no instant has the date 2011-12-30.
func TestSkippedDate(t *testing.T) {
	apia := winLoad(t, "Pacific/Apia")
	winRunLocalCases(t, DailyIn(apia), apia, []winLocalCase{
		{"2011-12-30T09:59:59Z", "2011-12-29", "2011-12-29T10:00:00Z", "2011-12-30T10:00:00Z", 24 * time.Hour},
		{"2011-12-30T10:00:00Z", "2011-12-31", "2011-12-30T10:00:00Z", "2011-12-31T10:00:00Z", 24 * time.Hour},
	})
	winRunLocalCases(t, WeeklyIn(apia), apia, []winLocalCase{
		{"2011-12-30T10:00:00Z", "2011-W52", "2011-12-26T10:00:00Z", "2012-01-01T10:00:00Z", 6 * 24 * time.Hour},
	})
}

// TestZoneBoundsLeapYearBug covers the last UTC day of a leap year beyond a
// zone's listed transitions, where time.Time.ZoneBounds reports an end
// before the instant (golang/go#81583), right where startOfDate walks the
// offset spans because 2041-01-01 UTC opens a new span.
func TestZoneBoundsLeapYearBug(t *testing.T) {
	for _, name := range []string{"America/Santiago", "America/New_York", "Pacific/Chatham", "Australia/Lord_Howe"} {
		loc := winLoad(t, name)
		for _, s := range []string{"2040-12-30T12:00:00Z", "2040-12-31T00:00:00Z", "2040-12-31T12:00:00Z", "2041-01-01T00:00:00Z", "2041-01-01T23:00:00Z", "2041-01-02T12:00:00Z"} {
			at := winUTC(t, s)
			for _, w := range winWindowsIn(loc) {
				require.NoError(t, winCheckPeriod(w, loc, at))
			}
		}
		for d := 28; d <= 33; d++ {
			day := time.Date(2040, 12, d, 0, 0, 0, 0, time.UTC)
			assert.True(t, winBruteStart(day, loc).Equal(startOfDate(day, loc)), "%s %s", name, day)
		}
	}
}

func TestPeriodProperties(t *testing.T) {
	const seed = 20261130
	rng := rand.New(rand.NewPCG(seed, seed))
	lo := time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	hi := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		at := time.Unix(0, lo+rng.Int64N(hi-lo))
		loc := winZones[i%len(winZones)]
		for _, w := range winWindowsIn(loc) {
			require.NoError(t, winCheckPeriod(w, loc, at), "seed %d, sample %d", seed, i)
		}
	}
}

// winBruteStart finds the first instant whose local date in loc is day or
// later the slow way: minute by minute, then second by second.
func winBruteStart(day time.Time, loc *time.Location) time.Time {
	target := day.Unix()
	wall := func(x int64) int64 {
		_, off := time.Unix(x, 0).In(loc).Zone()
		return x + int64(off)
	}
	x := target - 27*3600
	for wall(x) < target {
		x += 60
	}
	lo, hi := x-60, x // wall(lo) < target <= wall(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if wall(mid) >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return time.Unix(hi, 0).In(loc)
}

// TestStartOfDateBruteForce compares startOfDate with a brute-force search
// on every date near an offset change from 1971 to 2045 in the test zones,
// which is where time.Date alone can go wrong.
func TestStartOfDateBruteForce(t *testing.T) {
	from := time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC)
	step := 3 * time.Hour
	if testing.Short() {
		to = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	for i, loc := range winZones {
		checked := 0
		var lastDay time.Time
		_, prev := from.In(loc).Zone()
		for at := from.Add(step); at.Before(to); at = at.Add(step) {
			_, off := at.In(loc).Zone()
			if off == prev {
				continue
			}
			prev = off
			y, m, d := at.In(loc).Date()
			mid := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
			for k := -2; k <= 2; k++ {
				day := mid.AddDate(0, 0, k)
				if !day.After(lastDay) {
					continue
				}
				lastDay = day
				checked++
				want := winBruteStart(day, loc)
				got := startOfDate(day, loc)
				require.True(t, want.Equal(got), "%s %s: got %s, want %s", winZoneNames[i], day.Format(time.DateOnly), got, want)
			}
		}
		if winZoneNames[i] != "UTC" && winZoneNames[i] != "Asia/Kolkata" {
			assert.NotZero(t, checked, "%s: no offset change found", winZoneNames[i])
		}
	}
}

func FuzzWindowPeriod(f *testing.F) {
	zone := func(name string) uint8 {
		for i, n := range winZoneNames {
			if n == name {
				return uint8(i)
			}
		}
		panic(name)
	}
	seed := func(s, name string) {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		f.Add(at.Unix(), uint32(at.Nanosecond()), zone(name))
	}
	seed("2027-01-01T00:00:00Z", "UTC")
	seed("2027-01-03T23:59:59.999999999Z", "UTC")
	seed("2021-01-04T00:00:00Z", "UTC")
	seed("2028-02-29T12:00:00Z", "UTC")
	seed("2027-03-28T01:00:00Z", "Europe/Berlin")
	seed("2027-10-31T01:30:00Z", "Europe/Berlin")
	seed("2027-11-07T06:30:00Z", "America/New_York")
	seed("2027-09-05T04:00:00Z", "America/Santiago")
	seed("2027-04-04T03:30:00Z", "America/Santiago")
	seed("2027-11-07T05:30:00Z", "America/Havana")
	seed("2005-10-30T03:30:00Z", "America/Moncton")
	seed("2011-12-30T10:00:00Z", "Pacific/Apia")
	seed("2040-12-31T12:00:00Z", "Australia/Lord_Howe")
	seed("2027-04-04T02:45:00Z", "Pacific/Chatham")
	seed("0001-02-01T00:00:00Z", "America/Havana")
	seed("9999-10-31T23:59:59.999999999Z", "Pacific/Chatham")

	// Keep instants whose dates, and their neighbours', stay four digits
	// (the IDs that sort as strings); in the first and last centuries the
	// zones hold their first (LMT) and last rules.
	lo := time.Date(1, 2, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(9999, 11, 1, 0, 0, 0, 0, time.UTC).Unix()
	f.Fuzz(func(t *testing.T, sec int64, nanos uint32, zone uint8) {
		if sec < lo || sec >= hi {
			sec = lo + ((sec-lo)%(hi-lo)+(hi-lo))%(hi-lo)
		}
		at := time.Unix(sec, int64(nanos%1e9))
		loc := winZones[int(zone)%len(winZones)]
		for _, w := range winWindowsIn(loc) {
			if err := winCheckPeriod(w, loc, at); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func BenchmarkPeriod(b *testing.B) {
	berlin := winLoad(b, "Europe/Berlin")
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, w := range []Window{Daily(), Weekly(), Monthly(), Named("daily-berlin", DailyIn(berlin)), Named("weekly-berlin", WeeklyIn(berlin))} {
		b.Run(w.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = w.Period(at)
			}
		})
	}
}
