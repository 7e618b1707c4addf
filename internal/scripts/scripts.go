// Package scripts holds the leaderboard's Lua scripts, embedded at build time
// and wrapped once in rueidis.Lua values, which run them with EVALSHA and fall
// back to EVAL only the first time a server lacks them.
//
// Every script takes all its keys through KEYS, so Redis Cluster routes it by
// the board's hash tag, and returns scores as strings, since Redis truncates
// Lua numbers in replies to integers. Each one is common.lua followed by its
// own file.
package scripts

import (
	_ "embed"

	"github.com/redis/rueidis"
)

var (
	//go:embed common.lua
	common string
	//go:embed submit.lua
	submitSrc string
	//go:embed many.lua
	manySrc string
	//go:embed rank.lua
	rankSrc string
	//go:embed range.lua
	rangeSrc string
)

var (
	// Submit applies one submission to every window; see submit.lua.
	Submit = rueidis.NewLuaScript(common + submitSrc)
	// Many applies a batch of submissions to every window; see many.lua.
	Many = rueidis.NewLuaScript(common + manySrc)
	// Rank reads a competition standing; see rank.lua.
	Rank = rueidis.NewLuaScript(common + rankSrc)
	// Range reads a slice around a member or a competition page; see range.lua.
	Range = rueidis.NewLuaScript(common + rangeSrc)
)
