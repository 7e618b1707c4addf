package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiprank/leaderboard/internal/testnet"
)

// The tests run the program as main does, through cli, against an embedded
// miniredis and the local PostgreSQL (PGSTORE_DSN, else DATABASE_URL, else
// the default), on tables of their own that they drop. Without PostgreSQL
// they skip, except under CI=true, where they fail.

// testDSN is the PostgreSQL of the tests.
func testDSN() string {
	for _, name := range []string{"PGSTORE_DSN", "DATABASE_URL"} {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	return defaultDatabaseURL
}

// env is a getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// runCLI runs cli and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args []string, vars map[string]string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli(ctx, args, env(vars), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// smallRun is the flags of a small demonstration on tables of its own,
// dropped when the test ends.
func smallRun(t *testing.T) []string {
	t.Helper()
	pool := postgres(t, testDSN())
	prefix := fmt.Sprintf("durable_test_%08x_", rand.Uint32())
	t.Cleanup(func() { dropPrefixed(t, pool, prefix) })
	return []string{"-board", fmt.Sprintf("durable-test-%08x", rand.Uint32()), "-table-prefix", prefix,
		"-players", "300", "-rounds", "5", "-round-size", "200", "-live", "300", "-workers", "4"}
}

// durations matches the times a run prints ("in 523ms"), which differ from
// run to run.
var durations = regexp.MustCompile(` in [0-9][0-9.]*(ns|µs|ms|s|m[0-9.]*s|h[0-9.ms]*)`)

// figures are the lines of a run's output that hold its figures: scores,
// ranks and counts.
func figures(out string) []string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "#") || strings.Contains(line, "Count:") || strings.Contains(line, "members") {
			lines = append(lines, durations.ReplaceAllString(line, " in <t>"))
		}
	}
	return lines
}

// TestRunTwiceSameFigures runs the demonstration twice on the same tables:
// the second run must print the same figures as the first (a run that left
// kept standings behind made the next one rebuild them, then add its own
// scores on top), and, as stdout is no terminal, no progress bar.
func TestRunTwiceSameFigures(t *testing.T) {
	args := smallRun(t)
	vars := map[string]string{"DATABASE_URL": testDSN()}
	var outs [2]string
	for i := range outs {
		code, out, errOut := runCLI(t, args, vars)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s\n%s", i+1, code, errOut, out)
		}
		outs[i] = out
		for _, want := range []string{
			"Present() = false",
			"Duplicate = true",
			"Present() = false, Count: alltime 0, weekly 0.",
			"Present() = true",
			"pgstore's kept standings equal its log's aggregation (299 members)",
			"Identical to before the loss",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("run %d: output lacks %q:\n%s", i+1, want, out)
			}
		}
		if strings.Contains(out, "clean: false") {
			t.Errorf("run %d: Verify found differences:\n%s", i+1, out)
		}
		if strings.ContainsRune(out, '\r') {
			t.Errorf("run %d: a progress bar was drawn into a stream that is not a terminal:\n%q", i+1, out)
		}
	}
	first, second := figures(outs[0]), figures(outs[1])
	if strings.Join(first, "\n") != strings.Join(second, "\n") {
		t.Errorf("the second run's figures differ from the first's:\nfirst:\n%s\nsecond:\n%s",
			strings.Join(first, "\n"), strings.Join(second, "\n"))
	}
	if a, b := durations.ReplaceAllString(outs[0], " in <t>"), durations.ReplaceAllString(outs[1], " in <t>"); a != b {
		t.Errorf("the two runs print different output:\n%s\n---\n%s", a, b)
	}
}

// TestHelpTouchesNothing: -h and --help print the usage to stdout and exit
// 0 without connecting to Redis or PostgreSQL, whatever the environment.
func TestHelpTouchesNothing(t *testing.T) {
	redisAddr, redisConns := testnet.CountingListener(t)
	pgAddr, pgConns := testnet.CountingListener(t)
	vars := map[string]string{
		"REDIS_URL":    "redis://" + redisAddr,
		"DATABASE_URL": "postgres://postgres@" + pgAddr + "/test?sslmode=disable&connect_timeout=2",
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-players", "10", "-help"}} {
		code, out, errOut := runCLI(t, args, vars)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q: want 0 and nothing", args, code, errOut)
		}
		for _, want := range []string{"Usage: durable", "REDIS_URL", "DATABASE_URL", "-round-size"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: usage lacks %q:\n%s", args, want, out)
			}
		}
	}
	if n, m := redisConns.Load(), pgConns.Load(); n != 0 || m != 0 {
		t.Errorf("-h connected %d times to Redis and %d times to PostgreSQL: want none", n, m)
	}
}

// TestBadSettings: settings the demonstration cannot run with are refused
// with exit 2 and a message, before anything connects.
func TestBadSettings(t *testing.T) {
	redisAddr, redisConns := testnet.CountingListener(t)
	pgAddr, pgConns := testnet.CountingListener(t)
	vars := map[string]string{"REDIS_URL": "redis://" + redisAddr, "DATABASE_URL": "postgres://postgres@" + pgAddr + "/test"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-round-size", "5000"}, "-round-size 5000"}, // more than -players: would panic
		{[]string{"-live", "0"}, "-live 0"},
		{[]string{"-workers", "0"}, "-workers 0"},
		{[]string{"-players", "-1"}, "-players -1"},
		{[]string{"-board", "a b"}, "-board"},
		// Refused by pgstore.New and leaderboard.New after connecting,
		// with exit 1, until config.check applied their rules.
		{[]string{"-table-prefix", "Bad-"}, "-table-prefix"},
		{[]string{"-table-prefix", strings.Repeat("p", 31)}, "-table-prefix"},
		{[]string{"-board", "a\x01b"}, "-board"},
		{[]string{"-board", "a\x7fb"}, "-board"},
		{[]string{"-players", "x"}, "invalid value"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		code, _, errOut := runCLI(t, c.args, vars)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q: want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if n, m := redisConns.Load(), pgConns.Load(); n != 0 || m != 0 {
		t.Errorf("bad settings connected %d times to Redis and %d times to PostgreSQL: want none", n, m)
	}
}

// TestNoSecretInOutput: a password in REDIS_URL or DATABASE_URL appears in
// no line the program prints, whether the URL is malformed, refused by the
// parser, or fine but pointing where nothing answers.
func TestNoSecretInOutput(t *testing.T) {
	const secret = "s3cr3tPW"
	redisAddr, _ := testnet.CountingListener(t)
	pgAddr, _ := testnet.CountingListener(t)
	dsn := testDSN()
	for _, vars := range []map[string]string{
		{"REDIS_URL": "redis://user:" + secret + "@127.0.0.1:6379/%zz"},                // url.Parse quotes the URL
		{"REDIS_URL": "redis://user:" + secret + "/x@127.0.0.1:6379"},                  // a '/' in the password
		{"REDIS_URL": "redis://user:1234/" + secret + "@127.0.0.1:6379"},               // parses, the password as a path
		{"REDIS_URL": "redis://user:" + secret + "@127.0.0.1:6379/not-a-db"},           // rueidis refuses the path
		{"REDIS_URL": "redis://user:" + secret + "@127.0.0.1:6379?db=x"},               // rueidis refuses the query
		{"REDIS_URL": "redis://user:" + secret + "@" + redisAddr, "DATABASE_URL": dsn}, // nothing answers
		{"DATABASE_URL": "postgres://u:" + secret + "@127.0.0.1:5432/db?sslmode=bogus"},
		{"DATABASE_URL": "postgres://u:" + secret + "/x@127.0.0.1:5432/db"},
		{"DATABASE_URL": "host=127.0.0.1 port=5432 password=" + secret + " sslmode=bogus"},
		{"DATABASE_URL": "host=127.0.0.1 port=x password='" + secret + "'"},
		{"DATABASE_URL": "postgres://u:" + secret + "@" + pgAddr + "/db?sslmode=disable&connect_timeout=2"},
	} {
		code, out, errOut := runCLI(t, []string{"-table-prefix", "durable_never_created_"}, vars)
		if code == 0 {
			t.Errorf("%v: exit 0, want a failure", vars)
		}
		if strings.Contains(out+errOut, secret) {
			t.Errorf("%v: the password was printed:\nstdout: %s\nstderr: %s", vars, out, errOut)
		}
		if !strings.Contains(errOut, "REDIS_URL") && !strings.Contains(errOut, "DATABASE_URL") &&
			!strings.Contains(errOut, "redis") && !strings.Contains(errOut, "PostgreSQL") {
			t.Errorf("%v: the error does not say what failed: %s", vars, errOut)
		}
	}
}

// TestShownAddressesHideThePassword: what the program prints of the
// addresses has the password masked.
func TestShownAddressesHideThePassword(t *testing.T) {
	r, err := parseRedisURL("redis://user:pa%2Fss@127.0.0.1:6379/2")
	if err != nil {
		t.Fatal(err)
	}
	if r.shown != "redis://xxxxx@127.0.0.1:6379/2" || r.opt.Password != "pa/ss" || r.opt.SelectDB != 2 {
		t.Errorf("shown %q, password %q, db %d", r.shown, r.opt.Password, r.opt.SelectDB)
	}
	for _, dsn := range []string{"postgres://app:pa%2Fss@db:5433/game", "host=db port=5433 user=app password=pa/ss dbname=game"} {
		p, err := parsePostgres(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if p.shown != "postgres://app@db:5433/game" {
			t.Errorf("%s: shown %q", dsn, p.shown)
		}
		if got := newSecrets(r, p).scrub("a pa/ss b pa%2Fss c"); got != "a xxxxx b xxxxx c" {
			t.Errorf("scrub: %q", got)
		}
	}
}

// TestRedisURLTrailingSlash: "redis://host:port/" is database 0, as
// without the slash (rueidis.ParseURL alone refuses it), and connects.
func TestRedisURLTrailingSlash(t *testing.T) {
	for _, raw := range []string{"redis://127.0.0.1:6379/", "redis://127.0.0.1:6379", "redis://127.0.0.1:6379/0"} {
		r, err := parseRedisURL(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if r.opt.SelectDB != 0 || len(r.opt.InitAddress) != 1 || r.opt.InitAddress[0] != "127.0.0.1:6379" {
			t.Errorf("%s: db %d, addresses %v", raw, r.opt.SelectDB, r.opt.InitAddress)
		}
		if r.shown != raw { // as the README's sample says: printed as given
			t.Errorf("%s: shown as %s", raw, r.shown)
		}
	}
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379"
	}
	r, err := parseRedisURL(strings.TrimSuffix(url, "/") + "/")
	if err != nil {
		t.Fatal(err)
	}
	client, stop, err := r.connect()
	if err != nil {
		msg := fmt.Sprintf("no Redis at %s (set REDIS_URL): %v", r.shown, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	defer stop()
	if err := client.Do(context.Background(), client.B().Ping().Build()).Error(); err != nil {
		t.Fatal(err)
	}
}

// rates are the rates a bar prints.
var rates = regexp.MustCompile(`([0-9]+) [a-z]+/(s|min|hr)\)`)

// TestMeterRates: on a terminal the bar's clock starts with the work, so
// its first rate is at most the steps over the time since (not the steps
// over the nanoseconds since the first step); a step that does not advance
// draws nothing, so no rate of zero ("0 members/hr") shows; and elsewhere
// it draws nothing at all.
func TestMeterRates(t *testing.T) {
	var out bytes.Buffer
	m := newMeter(&out, true, 10_000, "   rebuilding", "members")
	const pause = 20 * time.Millisecond
	m.describe("   rebuilding alltime/alltime")
	m.set(0) // a period starts: nothing read yet
	time.Sleep(pause)
	m.set(1000)
	m.describe("   rebuilding weekly/2026-W49")
	m.set(1000) // the next period starts
	m.set(4000)
	m.finish()
	found := rates.FindAllStringSubmatch(out.String(), -1)
	if len(found) == 0 {
		t.Fatalf("no rate drawn: %q", out.String())
	}
	var first float64
	fmt.Sscan(found[0][1], &first)
	if limit := 1000 / pause.Seconds(); found[0][2] != "s" || first > limit {
		t.Errorf("first rate %s: want at most %.0f members/s (1000 members in at least %v)", found[0][0], limit, pause)
	}
	for _, r := range found {
		if r[2] != "s" || r[1] == "0" {
			t.Errorf("rate %q drawn: %q", r[0], out.String())
		}
	}
	if !strings.Contains(out.String(), "weekly/2026-W49") {
		t.Errorf("the new description was not drawn: %q", out.String())
	}

	out.Reset()
	m = newMeter(&out, false, 10_000, "   rebuilding", "members")
	m.describe("x")
	m.set(5000)
	m.finish()
	if out.Len() != 0 {
		t.Errorf("not a terminal: drew %q", out.String())
	}
}

// postgres connects to dsn, or skips (fails under CI=true) when no
// PostgreSQL answers there.
func postgres(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		msg := fmt.Sprintf("no PostgreSQL (set PGSTORE_DSN or DATABASE_URL): %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(pool.Close)
	return pool
}

// dropPrefixed drops every table whose name starts with prefix.
func dropPrefixed(t *testing.T, pool *pgxpool.Pool, prefix string) {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND starts_with(tablename, $1)", prefix)
	if err != nil {
		t.Errorf("listing the test tables: %v", err)
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Errorf("listing the test tables: %v", err)
		return
	}
	for _, name := range names {
		if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
	}
}
