package scripts

import (
	"regexp"
	"strings"
)

// Redis runs a script's whole text on every call, and so builds a closure
// (with its upvalues) for every local function the text defines, called or
// not: a few hundredths of a µs each on Redis 7.0 here, which the scripts
// that take large libraries (a sharded write's, a batch's) paid for up to
// eight functions they never call (BENCHMARKS.md, "what a script's
// library costs"). The libraries stay whole, by topic; shake cuts from a
// script the functions it never calls.

// libFunc is a library function: a line "local function name(" at the
// start of a line through the next line that is "end" alone, the libraries'
// layout for every top-level function (TestLibrariesShake checks it).
var libFunc = regexp.MustCompile(`(?ms)^local function (\w+)\(.*?^end\n`)

// comment is a Lua comment to the end of its line (no library writes "--"
// inside a string, nor long comments).
var comment = regexp.MustCompile(`--[^\n]*`)

// shake joins libs and body, without the libraries' functions that nothing
// else in the script names outside comments: dropping one may leave
// another unnamed, so it runs until none is dropped.
func shake(libs []string, body string) string {
	type piece struct {
		text, name string // name: a library function's; "" for other text
		drop       bool
	}
	var pieces []piece
	for _, l := range libs {
		at := 0
		for _, m := range libFunc.FindAllStringSubmatchIndex(l, -1) {
			pieces = append(pieces, piece{text: l[at:m[0]]}, piece{text: l[m[0]:m[1]], name: l[m[2]:m[3]]})
			at = m[1]
		}
		pieces = append(pieces, piece{text: l[at:]})
	}
	pieces = append(pieces, piece{text: body})
	code := make([]string, len(pieces)) // each piece without its comments
	for i, p := range pieces {
		code[i] = comment.ReplaceAllString(p.text, "")
	}
	for dropped := true; dropped; {
		dropped = false
		for i, p := range pieces {
			if p.name == "" || p.drop {
				continue
			}
			word := regexp.MustCompile(`\b` + p.name + `\b`)
			named := false
			for j, q := range pieces {
				if j != i && !q.drop && word.MatchString(code[j]) {
					named = true
					break
				}
			}
			if !named {
				pieces[i].drop, dropped = true, true
			}
		}
	}
	var b strings.Builder
	for _, p := range pieces {
		if !p.drop {
			b.WriteString(p.text)
		}
	}
	return b.String()
}
