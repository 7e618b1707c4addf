package keys

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPeriodKeys(t *testing.T) {
	b := NewBoard("lb", "race")
	require.Equal(t, "lb:{race}:alltime", b.Period("alltime", "alltime"))
	require.Equal(t, "lb:{race}:weekly:2026-W49", b.Period("weekly", "2026-W49"))
	require.Equal(t, "{race}", b.Tag())
	require.Equal(t, `lb:{race\*}:*`, NewBoard("lb", "race*").Pattern())
	require.Equal(t, "lb:{race#s3}:weekly:2026-W49", b.Shard(3).Period("weekly", "2026-W49"))
	require.Equal(t, "lb:{race}:alltime:idx", Index(b.Period("alltime", "alltime")))
	require.Equal(t, "lb:{race}:alltime:idx:v", Versions(Index(b.Period("alltime", "alltime"))))
}

func TestValidName(t *testing.T) {
	for _, s := range []string{"race", "a:b", "üben", "player-42"} {
		require.True(t, ValidName(s), s)
	}
	for _, s := range []string{"", "a b", "a{b", "a}b", "a\tb", "a\nb", "a\x00b"} {
		require.False(t, ValidName(s), "%q", s)
	}
	require.False(t, ValidSegment("a:b"))
	require.True(t, ValidSegment("2026-W49"))
}
