package leaderboard_test

import (
	"context"
	"iter"
	"time"

	"github.com/redis/rueidis"

	lb "github.com/skiprank/leaderboard"
)

// The names and signatures that the public contract (API.md) fixes, so
// that a change to one fails to compile here, not in the programs written
// against it. Additions beside them (options, fields, methods) are free;
// what is listed must keep compiling as written. Behaviour is checked by
// the tests of each operation.
var (
	_ func(rueidis.Client, string, ...lb.Option) (*lb.Leaderboard, error) = lb.New

	_ func(lb.Order) lb.Option         = lb.WithOrder
	_ func(lb.Policy) lb.Option        = lb.WithPolicy
	_ func(...lb.Window) lb.Option     = lb.WithWindows
	_ func(lb.TieBreak) lb.Option      = lb.WithTieBreak
	_ func(lb.RankMode) lb.Option      = lb.WithRanking
	_ func(func() time.Time) lb.Option = lb.WithClock
	_ func(string) lb.Option           = lb.WithKeyPrefix
	_ func(time.Duration) lb.Option    = lb.WithRetention
	_ func(...float64) lb.Option       = lb.WithShards
	_ func(int) lb.Option              = lb.WithHotTop

	_ = [...]lb.Order{lb.HighestFirst, lb.LowestFirst}
	_ = [...]lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate}
	_ = [...]lb.RankMode{lb.Ordinal, lb.Competition}
	_ = [...]int{int(lb.Order(0)), int(lb.Policy(0)), int(lb.RankMode(0))}

	_ = lb.Entry{Member: "", Score: float64(0), Rank: int64(0), Data: ""}
	_ = lb.Standing{Entry: lb.Entry{}, Total: int64(0), Percentile: float64(0)}
	_ = lb.Result{Standing: lb.Standing{}, Previous: lb.Entry{}, Changed: false, Windows: []lb.WindowResult{}}
	_ = lb.WindowResult{Window: "", Period: "", Standing: lb.Standing{}, Previous: lb.Entry{}, Changed: false}
	_ = lb.Page{Entries: []lb.Entry{}, Number: int(0), Size: int(0), Total: int64(0)}
	_ = lb.Period{ID: "", Start: time.Time{}, End: time.Time{}}
	_ = lb.PeriodInfo{Period: lb.Period{}, Members: int64(0)}
	_ = lb.TimeOrder{Epoch: time.Time{}, Resolution: time.Duration(0), MaxScore: float64(0), Decimals: int(0)}
	_ = [1]struct{}{}[lb.MaxDataLen-4096] // MaxDataLen is 4096: any other value is an index out of range

	_ func(*lb.Leaderboard, context.Context, string, float64, ...lb.SubmitOption) (lb.Result, error) = (*lb.Leaderboard).Submit
	_ func(*lb.Leaderboard, context.Context, map[string]float64) error                               = (*lb.Leaderboard).SubmitMany
	_ func(*lb.Leaderboard, context.Context, int, ...lb.Query) ([]lb.Entry, error)                   = (*lb.Leaderboard).Top
	_ func(*lb.Leaderboard, context.Context, string, ...lb.Query) (lb.Standing, error)               = (*lb.Leaderboard).Rank
	_ func(*lb.Leaderboard, context.Context, string, int, ...lb.Query) ([]lb.Entry, error)           = (*lb.Leaderboard).Around
	_ func(*lb.Leaderboard, context.Context, int, int, ...lb.Query) (lb.Page, error)                 = (*lb.Leaderboard).Page
	_ func(*lb.Leaderboard, context.Context, []string, ...lb.Query) ([]lb.Entry, error)              = (*lb.Leaderboard).Among
	_ func(*lb.Leaderboard, context.Context, ...lb.Query) (int64, error)                             = (*lb.Leaderboard).Count
	_ func(*lb.Leaderboard, context.Context, ...string) error                                        = (*lb.Leaderboard).Remove

	_ func(string) lb.SubmitOption    = lb.WithID
	_ func(time.Time) lb.SubmitOption = lb.WithTime
	_ func(string) lb.SubmitOption    = lb.WithData
	_ func(lb.Window) lb.Query        = lb.In
	_ func(time.Time) lb.Query        = lb.At
	_ func() lb.Query                 = lb.IncludeData

	_ func() lb.Window                        = lb.AllTime
	_ func() lb.Window                        = lb.Daily
	_ func() lb.Window                        = lb.Weekly
	_ func() lb.Window                        = lb.Monthly
	_ func(*time.Location) lb.Window          = lb.DailyIn
	_ func(*time.Location) lb.Window          = lb.WeeklyIn
	_ func(*time.Location) lb.Window          = lb.MonthlyIn
	_ lb.Window                               = contractWindow{}
	_ func(lb.TimeOrder) (lb.TieBreak, error) = lb.EarlierFirst
	_ func(lb.TimeOrder) (lb.TieBreak, error) = lb.LaterFirst

	_ func(*lb.Leaderboard, context.Context, string, string) error                                   = (*lb.Leaderboard).SetData
	_ func(*lb.Leaderboard, context.Context) error                                                   = (*lb.Leaderboard).Delete
	_ func(*lb.Leaderboard, context.Context, ...lb.Query) error                                      = (*lb.Leaderboard).Reset
	_ func(*lb.Leaderboard, context.Context, ...lb.Query) ([]lb.PeriodInfo, error)                   = (*lb.Leaderboard).Periods
	_ func(*lb.Leaderboard, context.Context, []string, ...lb.Query) ([]lb.Standing, error)           = (*lb.Leaderboard).Ranks
	_ func(*lb.Leaderboard, context.Context, int64, int64, ...lb.Query) ([]lb.Entry, error)          = (*lb.Leaderboard).Range
	_ func(*lb.Leaderboard, context.Context, float64, float64, int, ...lb.Query) ([]lb.Entry, error) = (*lb.Leaderboard).Between
	_ func(*lb.Leaderboard, context.Context, float64, float64, ...lb.Query) (int64, error)           = (*lb.Leaderboard).CountBetween
	_ func(*lb.Leaderboard, context.Context, float64, float64, ...lb.Query) (int64, error)           = (*lb.Leaderboard).RemoveBetween
	_ func(*lb.Leaderboard, context.Context, float64, int, ...lb.Query) (int64, []lb.Entry, error)   = (*lb.Leaderboard).AroundScore
	_ func(*lb.Leaderboard, context.Context, float64, ...lb.Query) (lb.Entry, error)                 = (*lb.Leaderboard).Cutoff
	_ func(*lb.Leaderboard, context.Context, string, float64, ...lb.Query) error                     = (*lb.Leaderboard).Set
	_ func(*lb.Leaderboard, context.Context, ...lb.Query) iter.Seq2[lb.Entry, error]                 = (*lb.Leaderboard).All

	_ = [...]error{lb.ErrNotRanked, lb.ErrInvalidScore, lb.ErrInvalidMember, lb.ErrPrecision, lb.ErrInvalidArgument, lb.ErrExpired}
)

// contractWindow is a user's own window: the Window interface's method set
// as API.md fixes it.
type contractWindow struct{}

func (contractWindow) Name() string               { return "own" }
func (contractWindow) Period(time.Time) lb.Period { return lb.Period{ID: "own"} }
