package leaderboard

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// mirrorText is mirror.lua's text of a mirror of k entries holding es, as
// Go writes a number: what parseMirror must read back.
func mirrorText(k int, es []Entry) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(k) + ";")
	for _, e := range es {
		b.WriteString(strconv.Itoa(len(e.Member)) + ":" + e.Member)
		b.WriteString(strconv.FormatFloat(e.Score, 'g', 17, 64) + ",")
	}
	return b.String()
}

func TestParseMirror(t *testing.T) {
	for _, es := range [][]Entry{
		{},
		{{Member: "a", Score: 1}},
		// Members that hold the separators, digits and a value's text.
		{{Member: "1:b,", Score: -2.5}, {Member: ",;", Score: 0.1}, {Member: "12:x", Score: 1e22}, {Member: "é", Score: -1e-300}},
		{{Member: "p", Score: 9007199254740991}, {Member: "q", Score: math.MaxFloat64}},
	} {
		k, got, err := parseMirror(mirrorText(max(len(es), 1), es))
		require.NoError(t, err)
		require.Equal(t, max(len(es), 1), k)
		require.Equal(t, es, got)
		require.NotNil(t, got)
	}
	// As Redis 7.0's Lua writes them (%.17g), in a mirror of 10.
	k, got, err := parseMirror("10;2:p1100,2:p20.10000000000000001,2:p3-1e+22,")
	require.NoError(t, err)
	require.Equal(t, 10, k)
	require.Equal(t, []Entry{{Member: "p1", Score: 100}, {Member: "p2", Score: 0.1}, {Member: "p3", Score: -1e22}}, got)

	for _, bad := range []string{
		"", ";", "0;", "-1;", "x;", "1001;", "1:a1,", "3;a", "3;:a1,", "3;0:1,", "3;-1:a1,", "3;x:a1,", "3;5:ab1,",
		"3;1:a", "3;1:a,", "3;1:ax,", "3;1:anan,", "3;1:a1,1:b", "3;1:a1", "3;99999999999999999999:a1,",
		"1;1:a1,1:b2,", // more entries than its k
	} {
		_, _, err := parseMirror(bad)
		require.Error(t, err, "%q", bad)
		require.True(t, errors.Is(err, errMirror), "%q: %v", bad, err)
	}
}

// FuzzParseMirror: no text makes parseMirror panic, and what it reads
// reads back the same from the text mirror.lua would write of it.
func FuzzParseMirror(f *testing.F) {
	for _, seed := range []string{"1;", "1;1:a1,", "5;3:a,b-2.5,1::0,", "10;2:p20.10000000000000001,", "2;1:a1e308,1:b-1e-320,"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		k, es, err := parseMirror(text)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(es), k)
		k2, again, err := parseMirror(mirrorText(k, es))
		require.NoError(t, err)
		require.Equal(t, k, k2)
		require.Equal(t, es, again)
	})
}
