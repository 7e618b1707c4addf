package scripts

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// libraries are the library files, by name.
var libraries = map[string]string{
	"common.lua": common, "order.lua": order, "ranks.lua": ranks, "versions.lua": versions,
	"writes.lua": writes, "shardwrites.lua": shardWrites, "shardof.lua": shardOf,
	"shardplace.lua": shardPlace, "shardstanding.lua": shardStanding, "shardslice.lua": shardSlice,
	"mirror.lua": mirror, "batchwrite.lua": batchWrite,
}

// allScripts are the package's scripts, by name.
var allScripts = map[string]*Script{
	"Submit": Submit, "Many": Many, "Batch": Batch, "Rank": Rank, "Range": Range,
	"PartWrite": PartWrite, "ShardWrite": ShardWrite, "ShardRead": ShardRead, "FirstBetter": FirstBetter,
	"ShardLocal": ShardLocal, "ShardBatch": ShardBatch, "ShardLocalMany": ShardLocalMany,
	"ShardLocate": ShardLocate, "ShardPage": ShardPage, "RemoveBetween": RemoveBetween, "Remove": Remove,
	"HotTop": HotTop, "HotPut": HotPut, "TopData": TopData,
	"primary_read.lua": PrimaryRead,
}

// TestLibrariesShake checks the layout shake relies on: each library's
// top-level functions open with "local function name(" at the start of a
// line and close with a line "end", and nothing else in a library closes a
// block at the start of a line, so that shake cuts whole functions.
func TestLibrariesShake(t *testing.T) {
	opens := regexp.MustCompile(`(?m)^local function `)
	for name, l := range libraries {
		blocks := libFunc.FindAllString(l, -1)
		if n := len(opens.FindAllString(l, -1)); n != len(blocks) {
			t.Errorf("%s: %d top-level functions, %d cut whole", name, n, len(blocks))
		}
		rest := libFunc.ReplaceAllString(l, "")
		if regexp.MustCompile(`(?m)^end\b`).MatchString(rest) {
			t.Errorf("%s: a line 'end' outside its top-level functions", name)
		}
		if strings.Contains(comment.ReplaceAllString(l, ""), "--") {
			t.Errorf("%s: '--' outside a comment", name)
		}
	}
}

// TestScriptsCallWhatTheyDefine checks that no script builds a function it
// never calls: every top-level function in a script's text is named
// elsewhere in it, outside comments. allScripts must list every script
// scripts.go builds.
func TestScriptsCallWhatTheyDefine(t *testing.T) {
	src, err := os.ReadFile("scripts.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(regexp.MustCompile(`(?m)^\t\w+ += new(Read)?Script\(`).FindAll(src, -1)); n != len(allScripts) {
		t.Fatalf("scripts.go builds %d scripts, allScripts lists %d", n, len(allScripts))
	}
	defs := regexp.MustCompile(`(?m)^local function (\w+)\(`)
	for name, s := range allScripts {
		code := comment.ReplaceAllString(s.src, "")
		for _, m := range defs.FindAllStringSubmatch(code, -1) {
			if n := len(regexp.MustCompile(`\b`+m[1]+`\b`).FindAllString(code, -1)); n < 2 {
				t.Errorf("%s defines %s and never calls it", name, m[1])
			}
		}
	}
}

// TestShake checks shake on a small library: a function the body calls and
// the function it calls stay, in place; one nothing calls goes, and so
// does a function only it called; text that is not a function stays.
func TestShake(t *testing.T) {
	lib := "local X = 1\n" +
		"-- calls b\nlocal function a(k)\n  return b(k) + X\nend\n" +
		"local function b(k)\n  return k\nend\n" +
		"local function c()\n  return d()\nend\n" +
		"local function d()\n  return 2\nend\n" +
		"local function e()\n  return 3\nend\n"
	got := shake([]string{lib, "-- e is named only in this comment\n"}, "return a(1)\n")
	want := "local X = 1\n-- calls b\nlocal function a(k)\n  return b(k) + X\nend\n" +
		"local function b(k)\n  return k\nend\n" +
		"-- e is named only in this comment\nreturn a(1)\n"
	if got != want {
		t.Fatalf("shake:\n%s\nwant:\n%s", got, want)
	}
}
