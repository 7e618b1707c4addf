package main

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// TestCommandLineReproduces: the command line every report prints parses
// back to the run's configuration, whatever flags shaped the board, the
// load or the mode, and with the defaults without REDIS_URL written out;
// it leaves out only the flags that pick the output.
func TestCommandLineReproduces(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  func(string) string
		want []string // in the command line
	}{
		{nil, noEnv, []string{"-members 10000", "-d 200ms"}},
		{nil, realEnv, nil},
		{[]string{"-members", "5000", "-data", "16", "-score-max", "5000", "-seed", "7", "-prefix", "lbx", "-load-c", "2",
			"-compare=false", "-windows", "daily,alltime", "-order", "lowest", "-ranking", "competition", "-tiebreak", "earlier",
			"-policy", "replace", "-shards", "4", "-c", "2,8", "-d", "150ms", "-rounds", "4", "-ops", "rank, top", "-no-auto-pipelining",
			"-commandstats", "-format", "md", "-keep", "-cpuprofile", "/tmp/x y.prof"}, realEnv,
			[]string{"-data 16", "-score-max 5000", "-seed 7", "-prefix lbx", "-load-c 2", "-compare=false", "-windows daily,alltime",
				"-order lowest", "-ranking competition", "-tiebreak earlier", "-policy replace", "-shards 4", "-c 2,8", "-d 150ms",
				"-rounds 4", "-ops rank,top", "-no-auto-pipelining", "-commandstats"}},
		{[]string{"-walk", "-windows", "4", "-members", "3000"}, noEnv, []string{"-walk", "-windows alltime,daily,weekly,monthly", "-d 200ms"}},
		{[]string{"-remove-between", "-members", "3000", "-remove", "1200"}, realEnv, []string{"-remove-between", "-remove 1200"}},
		{[]string{"-delete", "-windows", "alltime,monthly"}, realEnv, []string{"-delete", "-windows alltime,monthly"}},
		{[]string{"-batch", "-burst", "10", "-batch-members", "50", "-batch-window", "5ms", "-batch-size", "64", "-c", "8"}, realEnv,
			[]string{"-batch", "-burst 10", "-batch-members 50", "-batch-window 5ms", "-batch-size 64", "-c 8"}},
		{[]string{"-hot", "-hot-rate", "100", "-hot-trials", "3"}, realEnv, []string{"-hot", "-hot-rate 100", "-hot-trials 3"}},
		{[]string{"-replicas", "127.0.0.1:6380, 127.0.0.1:6381"}, realEnv, []string{"-replicas 127.0.0.1:6380,127.0.0.1:6381"}},
		{[]string{"-layout", "-shards", "8", "-layout-submits", "500", "-data", "4"}, realEnv, []string{"-layout", "-shards 8", "-layout-submits 500", "-data 4"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cfg, err := parseFlags(tc.args, tc.env, io.Discard)
			require.NoError(t, err)
			line := cfg.commandLine()
			for _, w := range tc.want {
				require.Contains(t, line+" ", " "+w+" ")
			}
			for _, out := range []string{"-format", "-keep", "-cpuprofile"} {
				require.NotContains(t, line, out, "a flag that picks only the output")
			}
			words := shellWords(t, strings.TrimPrefix(line, "go run ./examples/bench"))
			// With REDIS_URL set: the defaults without it are written out.
			again, err := parseFlags(words, realEnv, io.Discard)
			require.NoError(t, err, line)
			require.Equal(t, comparable(cfg), comparable(again), line)
			require.Equal(t, line, again.commandLine())
		})
	}
}

// comparable is cfg without what the command line leaves out.
func comparable(cfg config) config {
	cfg.args, cfg.format, cfg.cpuProfile, cfg.keep, cfg.redisURL = nil, "", "", false, ""
	return cfg
}

// shellWords splits a command line as a POSIX shell does the quoting
// shellQuote writes: words, and single-quoted text.
func shellWords(t *testing.T, s string) []string {
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			require.GreaterOrEqual(t, j, 0, "unterminated quote in %q", s)
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in, quoted = true, true
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
			in = true
		case c == ' ':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in, quoted = false, false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in || quoted {
		words = append(words, cur.String())
	}
	return words
}

// TestShellQuote: values a shell would split or expand are quoted.
func TestShellQuote(t *testing.T) {
	require.Equal(t, "lbbench", shellQuote("lbbench"))
	require.Equal(t, "127.0.0.1:6380,127.0.0.1:6381", shellQuote("127.0.0.1:6380,127.0.0.1:6381"))
	require.Equal(t, "''", shellQuote(""))
	for _, s := range []string{"a b", "it's", "$x", "a*"} {
		require.Equal(t, []string{s}, shellWords(t, shellQuote(s)))
	}
}

// TestFlagsCheckedAsTheLibraryChecks: parseFlags refuses a -batch-window,
// -batch-size, -prefix or -tiebreak with -score-max exactly when the SDK
// would refuse them after the load (NewBatcher, New), and with exit 2.
func TestFlagsCheckedAsTheLibraryChecks(t *testing.T) {
	c, err := connectMini(1, false)
	require.NoError(t, err)
	defer c.close()
	board, err := leaderboard.New(c.rue, "flags")
	require.NoError(t, err)
	for _, w := range []time.Duration{-time.Second, 0, 1, time.Millisecond, time.Minute, time.Minute + 1} {
		_, libErr := board.NewBatcher(leaderboard.WithBatchWindow(w))
		_, err := parseFlags([]string{"-batch", "-batch-window", w.String()}, realEnv, io.Discard)
		require.Equal(t, libErr == nil, err == nil, "-batch-window %v: parseFlags %v, NewBatcher %v", w, err, libErr)
	}
	for _, n := range []int{-1, 0, 1, leaderboard.MaxN, leaderboard.MaxN + 1} {
		_, libErr := board.NewBatcher(leaderboard.WithBatchSize(n))
		_, err := parseFlags([]string{"-batch", "-batch-size", strconv.Itoa(n)}, realEnv, io.Discard)
		require.Equal(t, libErr == nil, err == nil, "-batch-size %d: parseFlags %v, NewBatcher %v", n, err, libErr)
	}
	for _, p := range []string{"", "lb", "lb bench", "lb\tx", "lb{x", "x}", "lb\x01", "émoji-✓", "a:b"} {
		_, libErr := leaderboard.New(c.rue, "flags", leaderboard.WithKeyPrefix(p))
		_, err := parseFlags([]string{"-prefix", p}, realEnv, io.Discard)
		require.Equal(t, libErr == nil, err == nil, "-prefix %q: parseFlags %v, New %v", p, err, libErr)
	}
	for _, max := range []string{"2", "1000000", "1099511627776"} {
		for _, tb := range []string{"earlier", "later"} {
			args := []string{"-tiebreak", tb, "-score-max", max, "-members", "100"}
			cfg, err := parseFlags(args, realEnv, io.Discard)
			if err != nil {
				cfg, _ = parseFlags([]string{"-score-max", max, "-members", "100"}, realEnv, io.Discard)
				cfg.tieBreak = tb
			}
			cfg.name = randomName()
			_, libErr := newBench(cfg, c)
			require.Equal(t, libErr == nil, err == nil, "%v: parseFlags %v, New %v", args, err, libErr)
		}
	}
}

// TestBadFlagNamed: a bad flag is refused by parseFlags (main exits 2
// before connecting) with the flag named.
func TestBadFlagNamed(t *testing.T) {
	for args, name := range map[string]string{
		"-batch -batch-window 0": "-batch-window", "-batch -batch-size 5000": "-batch-size", "-replicas ,": "-replicas",
		"-ops top,top": "-ops", "-d 10ms": "-d", "-prefix a{b": "-prefix",
	} {
		_, err := parseFlags(strings.Fields(args), func(string) string { return "redis://127.0.0.1:1" }, io.Discard)
		require.ErrorContains(t, err, name, args)
	}
}
