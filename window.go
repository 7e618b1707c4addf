package leaderboard

import (
	"math"
	"strconv"
	"time"
)

// Period is one run of a window: the span between two resets, named by an ID
// that is stable for the whole span, so it can be used as part of a storage
// key and every score submitted in the span lands in the same place.
type Period struct {
	// ID names the period: "2026-11-30" (daily), "2026-W49" (weekly),
	// "2026-11" (monthly) or "alltime". IDs of the years 0 to 9999 sort
	// chronologically as strings, and each names one period only: periods
	// that share an ID share one key, and a new period would start with the
	// scores of an old one.
	ID string
	// Start is the first instant of the period and End the first instant of
	// the next one, that is, the next reset; both are zero for a window that
	// never resets. End is zero too for a built-in window's last period,
	// the one holding 292277024627-11-01 (its day, ISO week or month), which
	// holds every later instant up to the last one a time.Time holds, a
	// month on.
	// The period holds exactly the instants t with Start <= t < End (a zero
	// End bounds nothing).
	Start, End time.Time
}

// Window decides when a board resets. Implementations must be pure
// functions of t so that every process computing the period of the same
// instant agrees on it. The board calls Period on the caller's goroutine
// (New calls it up to three times: for the board's clock, its period's
// End and the instant before its Start, when it has them) and does not
// recover a panic in it: it reaches the caller. New refuses, with ErrInvalidArgument, a window
// whose period of the board's clock does not hold it, or whose periods
// there do not tile (the period holding its End starts at the End, the
// one holding the instant before its Start ends at the Start, each under
// another ID), or one with an invalid ID; a window that goes wrong only
// at other instants is refused by the call that meets it.
type Window interface {
	// Name identifies the window within a board: "alltime", "daily",
	// "weekly", "monthly", or a name given with Named.
	Name() string
	// Period returns the period holding t. Periods tile the timeline: the
	// period holding p.End starts at p.End.
	Period(t time.Time) Period
}

// AllTime returns the window that never resets, for boards that accumulate
// forever next to the periodic ones.
func AllTime() Window { return allTime{} }

// Daily returns the window that resets at midnight UTC. UTC is the default
// because it needs no agreement on a zone and has no 23h or 25h days.
func Daily() Window { return DailyIn(time.UTC) }

// Weekly returns the window of ISO-8601 weeks in UTC, resetting on Monday at
// midnight. ISO weeks belong to the year holding their Thursday, so the last
// days of December or the first days of January can belong to a week of the
// neighbouring year: 2027-01-01 is in "2026-W53".
func Weekly() Window { return WeeklyIn(time.UTC) }

// Monthly returns the window of calendar months in UTC.
func Monthly() Window { return MonthlyIn(time.UTC) }

// DailyIn returns the daily window for players who expect the board to reset
// at their local midnight rather than UTC's. Resets are at local midnight, so
// the days around a DST change are 23h or 25h long. Where a zone has no
// midnight on some date (the clocks jump over it), that day starts at its
// first instant instead. A nil loc means UTC. The name is "daily" as for
// Daily; use Named to keep both on one board.
func DailyIn(loc *time.Location) Window { return calendar{unit: unitDay, loc: orUTC(loc)} }

// WeeklyIn returns the ISO-8601 weekly window with resets at Monday's local
// midnight in loc, the week being taken from the local date. A nil loc means
// UTC.
func WeeklyIn(loc *time.Location) Window { return calendar{unit: unitWeek, loc: orUTC(loc)} }

// MonthlyIn returns the monthly window with resets at local midnight of the
// first of each month in loc. A nil loc means UTC.
func MonthlyIn(loc *time.Location) Window { return calendar{unit: unitMonth, loc: orUTC(loc)} }

// Named returns w under another name, so that one board can carry two
// windows whose default names collide, such as Daily() and
// DailyIn(berlin). Names are validated by the board, not here.
func Named(name string, w Window) Window {
	if n, ok := w.(named); ok {
		// Avoid a chain of wrappers in the hot path; only the outer name counts.
		w = n.w
	}
	return named{name: name, w: w}
}

type allTime struct{}

func (allTime) Name() string { return "alltime" }

func (allTime) Period(time.Time) Period { return Period{ID: "alltime"} }

type named struct {
	name string
	w    Window
}

func (n named) Name() string { return n.name }

func (n named) Period(t time.Time) Period { return n.w.Period(t) }

type unit uint8

const (
	unitDay unit = iota
	unitWeek
	unitMonth
)

// calendar is a window whose periods are runs of local dates: a day, an ISO
// week or a month. A period's key date (the day, the week's Monday or the
// month's first) is kept as a UTC midnight, because civil-date arithmetic in
// UTC is exact, and is only mapped to an instant in loc by startOfDate.
type calendar struct {
	unit unit
	loc  *time.Location
}

func orUTC(loc *time.Location) *time.Location {
	if loc == nil {
		return time.UTC
	}
	return loc
}

func (c calendar) Name() string {
	switch c.unit {
	case unitWeek:
		return "weekly"
	case unitMonth:
		return "monthly"
	default:
		return "daily"
	}
}

func (c calendar) Period(t time.Time) Period {
	y, m, d := t.In(c.loc).Date()
	if y > lastDay.y || y == lastDay.y && (m > lastDay.m || m == lastDay.m && d >= lastDay.d) {
		return c.last() // its key is lastDay's, or later: not to be built
	}
	key := c.first(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
	start := startOfDate(key, c.loc)
	for {
		if !key.Before(lastKeys[c.unit]) {
			return c.last()
		}
		next := c.next(key)
		end := startOfDate(next, c.loc)
		// Periods are [startOfDate(key), startOfDate(next)). In a few zones
		// the local date steps backwards (America/Moncton until 2006 fell back
		// from 00:01 to 23:01), so t's own date may name a period that has
		// already ended; the period holding t is then a later one.
		if t.Before(end) {
			return Period{ID: c.id(key), Start: start, End: end}
		}
		key, start = next, end
	}
}

// lastDay is the first civil date of the last period of every calendar
// window: the first of the month before the last date a time.Time holds
// (292277024627-12-06). The date arithmetic stops there (Add) or wraps
// around to the past (AddDate, time.Date), and a period found by it
// would not hold its instants: Period would look for the one that does
// forever. Every period before the last ends by the last one's key date,
// over a month before time.Time's last instant, in any zone.
var lastDay = func() (d struct {
	y, d int
	m    time.Month
}) {
	y, m, _ := time.Unix(math.MaxInt64-unixToInternal, 0).UTC().Date()
	first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0)
	d.y, d.m, d.d = first.Date()
	return d
}()

// unixToInternal is the seconds from time.Time's zero to the Unix epoch.
const unixToInternal = 62135596800

// lastKeys are the key dates of the last periods, by unit: each the key
// of the period holding lastDay.
var lastKeys = func() (ks [unitMonth + 1]time.Time) {
	day := time.Date(lastDay.y, lastDay.m, lastDay.d, 0, 0, 0, 0, time.UTC)
	for u := range ks {
		ks[u] = calendar{unit: unit(u)}.first(day)
	}
	return ks
}()

// last is c's last period, which never ends (see lastDay).
func (c calendar) last() Period {
	key := lastKeys[c.unit]
	return Period{ID: c.id(key), Start: startOfDate(key, c.loc)}
}

// first returns the key date of the period holding the civil date day.
func (c calendar) first(day time.Time) time.Time {
	switch c.unit {
	case unitWeek:
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		return day.Add(-time.Duration(back) * 24 * time.Hour)
	case unitMonth:
		y, m, _ := day.Date()
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	default:
		return day
	}
}

// next returns the key date of the period after the one keyed by key.
func (c calendar) next(key time.Time) time.Time {
	switch c.unit {
	case unitWeek:
		return key.Add(7 * 24 * time.Hour)
	case unitMonth:
		return key.AddDate(0, 1, 0) // key is the 1st, so no day overflow
	default:
		return key.Add(24 * time.Hour)
	}
}

// id formats the period ID by hand: Period runs on every submit and
// fmt would allocate and parse a format each time.
func (c calendar) id(key time.Time) string {
	var buf [16]byte
	b := buf[:0]
	switch c.unit {
	case unitWeek:
		// The Monday's ISO year and week are the whole week's.
		y, w := key.ISOWeek()
		b = appendYear(b, y)
		b = append(b, '-', 'W')
		b = append2(b, w)
	case unitMonth:
		y, m, _ := key.Date()
		b = appendYear(b, y)
		b = append(b, '-')
		b = append2(b, int(m))
	default:
		y, m, d := key.Date()
		b = appendYear(b, y)
		b = append(b, '-')
		b = append2(b, int(m))
		b = append(b, '-')
		b = append2(b, d)
	}
	return string(b)
}

// appendYear pads to four digits like the "2006" layout so IDs of years
// 0-9999 sort as strings.
func appendYear(b []byte, y int) []byte {
	if y < 0 || y > 9999 {
		return strconv.AppendInt(b, int64(y), 10)
	}
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10))
}

func append2(b []byte, v int) []byte {
	return append(b, byte('0'+v/10), byte('0'+v%10))
}

const (
	// maxOffset bounds the UTC offset of any zone (RFC 8536 allows
	// -25h..+26h); it limits how far from a date's midnight we must look.
	maxOffset = 26 * 60 * 60
	// settled is how long a zone must have been in effect before a
	// midnight for no earlier instant to have reached that local date: the
	// largest possible backward jump of the local clock.
	settled = 2 * maxOffset
)

// startOfDate returns the first instant, in loc, whose local date is day or
// later (day is a civil date at UTC midnight). Usually that is the local
// midnight time.Date returns, but time.Date is not enough when the clock
// jumps over midnight (America/Santiago, Asia/Beirut) or passes it twice
// (a fall-back from 00:xx): there it may return an instant that is not
// midnight, or the second midnight. Taking the first instant keeps
// Start <= t for every t of the date, and since Start and End come from
// this one function, periods still tile.
func startOfDate(day time.Time, loc *time.Location) time.Time {
	y, m, d := day.Date()
	g := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if loc == time.UTC {
		return g
	}
	wall := day.Unix()
	_, off := g.Zone()
	zs, _ := g.ZoneBounds()
	// If g really is midnight and its offset has been in effect for long
	// enough, no earlier instant can have shown this date or a later one.
	if g.Unix()+int64(off) == wall && (zs.IsZero() || g.Unix()-zs.Unix() >= settled) {
		return g
	}
	return firstInstantFrom(wall, loc)
}

// firstInstantFrom returns the first instant whose local wall clock in loc,
// as seconds since the Unix epoch read as UTC, is at least wall. It walks
// the zone's offset spans from maxOffset before wall: earlier instants show
// an earlier wall clock whatever their offset. Within a span of offset off
// the first such instant is wall-off, if the span reaches it.
func firstInstantFrom(wall int64, loc *time.Location) time.Time {
	x := wall - maxOffset
	for x <= wall+maxOffset {
		t := time.Unix(x, 0).In(loc)
		_, off := t.Zone()
		_, ze := t.ZoneBounds()
		end := ze.Unix()
		if ze.IsZero() {
			end = wall + maxOffset + 1
		} else if end <= x {
			// Beyond a zone's last listed transition, ZoneBounds can report an
			// end before t on the last UTC day of a leap year
			// (golang/go#81583). Go itself keeps t's offset up to the UTC
			// new year there, so treat that as the end of the span.
			end = time.Date(t.UTC().Year()+1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		}
		if c := max(x, wall-int64(off)); c < end {
			return time.Unix(c, 0).In(loc)
		}
		x = end
	}
	// Unreachable for offsets within ±maxOffset: at wall+maxOffset the clock
	// already shows at least wall.
	return time.Unix(wall, 0).In(loc)
}
