package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The README's worked example, computed with openssl; the server's tests
// check the same vector, so both implementations follow the one spec.
const (
	vectorSecret = "example-secret-0123456789abcdef0123"
	vectorBody   = `{"userId":"player-42","score":8500}`
	vectorNonce  = "0123456789abcdef0123456789abcdef"
	vectorSig    = "8f997280c9da09cb72afbebb114595dbbbaae394680fee53223dc5fcce108664"
)

func TestSignVector(t *testing.T) {
	h := sign("gs1", []byte(vectorSecret), http.MethodPost, "/api/v1/scores", []byte(vectorBody), time.Unix(1764460800, 0))
	if h.Get("X-LB-Timestamp") != "1764460800" || h.Get("X-LB-Key-Id") != "gs1" || len(h.Get("X-LB-Nonce")) != 32 {
		t.Fatalf("headers %v", h)
	}
	// The nonce is random; recompute with the vector's to compare.
	sum := sha256.Sum256([]byte(vectorBody))
	m := hmac.New(sha256.New, []byte(vectorSecret))
	fmt.Fprintf(m, "POST\n/api/v1/scores\n1764460800\n%s\n%s", vectorNonce, hex.EncodeToString(sum[:]))
	if got := hex.EncodeToString(m.Sum(nil)); got != vectorSig {
		t.Fatalf("vector signature %s, want %s", got, vectorSig)
	}
	m = hmac.New(sha256.New, []byte(vectorSecret))
	fmt.Fprintf(m, "POST\n/api/v1/scores\n1764460800\n%s\n%s", h.Get("X-LB-Nonce"), hex.EncodeToString(sum[:]))
	if got := hex.EncodeToString(m.Sum(nil)); got != h.Get("X-LB-Signature") {
		t.Fatalf("sign gave %s, want %s", h.Get("X-LB-Signature"), got)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParse(t *testing.T) {
	keys := env(map[string]string{"SIGNING_KEYS": "new:" + vectorSecret + ",old:other-secret"})
	o, err := parse(nil, keys, io.Discard)
	if err != nil || o.keyID != "new" || string(o.secret) != vectorSecret || o.players != 20 || o.base.String() != "http://127.0.0.1:8080" {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	if o, err = parse([]string{"-key-id", "old"}, keys, io.Discard); err != nil || string(o.secret) != "other-secret" {
		t.Fatalf("-key-id old: %v", err)
	}
	for _, u := range []string{"http://localhost:8080", "http://127.0.0.1:1", "http://127.8.9.10", "http://[::1]:8080"} {
		if _, err := parse([]string{"-url", u}, keys, io.Discard); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:8080", "http://192.168.1.1", "http://example.com", "http://0.0.0.0:8080"} {
		if _, err := parse([]string{"-url", u}, keys, io.Discard); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: %v, want refused as not loopback", u, err)
		}
	}
	if _, err := parse([]string{"-url", "http://10.0.0.1:8080", "-allow-remote"}, keys, io.Discard); err != nil {
		t.Errorf("-allow-remote: %v", err)
	}
	for _, args := range [][]string{
		{"-players", "0"}, {"-players", "1001"}, {"-duration", "11m"}, {"-duration", "0s"},
		{"-max-requests", "0"}, {"-reads", "1.5"}, {"-min-score", "5", "-max-score", "1"},
		{"-url", "ftp://127.0.0.1"}, {"-key-id", "nope"}, {"extra"},
	} {
		if _, err := parse(args, keys, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if _, err := parse(nil, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "SIGNING_KEYS") {
		t.Errorf("no keys: %v", err)
	}
}

// fakeService answers like the server: submits are checked for a
// signature and every third request, if a submit, is rate limited; with
// fail, the first request and every fifth after it get a 500.
func fakeService(t *testing.T, fail bool) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		if fail && i%5 == 1 {
			// The first request fails, and every fifth after it, whatever
			// its kind: a short run on a busy machine may send only a few,
			// all of one kind.
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/scores":
			body, _ := io.ReadAll(r.Body)
			sum := sha256.Sum256(body)
			m := hmac.New(sha256.New, []byte(vectorSecret))
			fmt.Fprintf(m, "POST\n%s\n%s\n%s\n%s", r.URL.RequestURI(), r.Header.Get("X-LB-Timestamp"), r.Header.Get("X-LB-Nonce"), hex.EncodeToString(sum[:]))
			if hex.EncodeToString(m.Sum(nil)) != r.Header.Get("X-LB-Signature") {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if i%3 == 0 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, `{}`)
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/leaderboard":
			io.WriteString(w, `{"entries":[]}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRun(t *testing.T) {
	keys := env(map[string]string{"SIGNING_KEYS": "gs1:" + vectorSecret})
	srv, n := fakeService(t, false)
	var out bytes.Buffer
	code := run(context.Background(), []string{"-url", srv.URL, "-players", "4", "-duration", "2s", "-max-requests", "300"}, keys, &out, io.Discard)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, &out)
	}
	for _, want := range []string{"submit", "top10", "p99", "429:", "requests/s", "ok: every response"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &out)
		}
	}
	// The request budget holds whatever the duration.
	if got := n.Load(); got > 300 {
		t.Fatalf("%d requests, want at most 300", got)
	}

	srv, _ = fakeService(t, true)
	out.Reset()
	code = run(context.Background(), []string{"-url", srv.URL, "-players", "2", "-duration", "1s", "-max-requests", "200"}, keys, &out, io.Discard)
	if code != 1 || !strings.Contains(out.String(), "FAIL:") || !strings.Contains(out.String(), "500") {
		t.Fatalf("with 500s: exit %d\n%s", code, &out)
	}
}

func TestRefusesRemoteDial(t *testing.T) {
	// Even a name given with -allow-remote unset can only reach loopback:
	// the dialer checks the address it connects to.
	o := options{players: 1, timeout: time.Second}
	c := newClient(&o)
	_, err := c.Get("http://192.0.2.1:9/") // TEST-NET-1: never routed, never dialled
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("dial outside loopback: %v", err)
	}
}

// TestRunMix: the share of reads sent is the share asked for, although the
// service rate-limits submits, and the summary reports what was sent.
func TestRunMix(t *testing.T) {
	keys := env(map[string]string{"SIGNING_KEYS": "gs1:" + vectorSecret})
	srv, _ := fakeService(t, false) // every third request, if a submit, is a 429 for a second
	var out bytes.Buffer
	code := run(context.Background(), []string{"-url", srv.URL, "-players", "4", "-duration", "3s", "-reads", "0.5", "-seed", "7"}, keys, &out, io.Discard)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, &out)
	}
	text := out.String()
	rows := map[string]int{}
	for _, op := range []string{"submit", "top10", "around"} {
		m := regexp.MustCompile(`(?m)^\s*` + op + `\s+(\d+)\s`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %s row:\n%s", op, text)
		}
		rows[op], _ = strconv.Atoi(m[1])
	}
	reads, total := rows["top10"]+rows["around"], rows["submit"]+rows["top10"]+rows["around"]
	share := float64(reads) / float64(total)
	if share < 0.35 || share > 0.65 {
		t.Errorf("sent %.1f%% reads (%d of %d), asked for 50%%:\n%s", 100*share, reads, total, text)
	}
	// Computed as the summary computes them: 100*reads/total and
	// 100*share differ in the last bit, and then in the rounding of a
	// share such as 49 of 80 (61.25%).
	want := fmt.Sprintf("sent %.1f%% reads (%d) and %.1f%% submits (%d); asked for 50%% reads",
		100*float64(reads)/float64(total), reads, 100*float64(rows["submit"])/float64(total), rows["submit"])
	if !strings.Contains(text, want) {
		t.Errorf("summary lacks %q:\n%s", want, text)
	}
	if strings.Contains(strings.SplitN(text, "\n", 2)[0], "reads 50%") {
		t.Errorf("the header states the asked share as if it were what was sent: %s", text)
	}
}

// TestHelp: -h prints the usage, exits 0 and sends nothing.
func TestHelp(t *testing.T) {
	srv, n := fakeService(t, false)
	for _, args := range [][]string{{"-h"}, {"-help"}, {"-url", srv.URL, "-h"}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, env(map[string]string{"SIGNING_KEYS": "gs1:" + vectorSecret}), &stdout, &stderr)
		if code != 0 || !strings.Contains(stderr.String(), "Usage: loadgen") || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, &stdout, &stderr)
		}
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("-h sent %d requests", got)
	}
}

// TestURLSecrets: a -url with a password never prints it.
func TestURLSecrets(t *testing.T) {
	keys := env(map[string]string{"SIGNING_KEYS": "gs1:" + vectorSecret})
	for _, u := range []string{"http://u:Sup3rSecret@10.0.0.1:8080", "ftp://u:Sup3rSecret@127.0.0.1", "http://u:Sup3rSecret@127.0.0.1:80x"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"-url", u}, keys, &stdout, &stderr); code != 2 {
			t.Errorf("%s: exit %d", u, code)
		}
		if strings.Contains(stdout.String()+stderr.String(), "Sup3rSecret") {
			t.Errorf("%s: printed the password: %s%s", u, &stdout, &stderr)
		}
	}
	srv, _ := fakeService(t, false)
	withUser := strings.Replace(srv.URL, "http://", "http://u:Sup3rSecret@", 1)
	var out bytes.Buffer
	if code := run(context.Background(), []string{"-url", withUser, "-players", "1", "-duration", "200ms"}, keys, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d:\n%s", code, &out)
	}
	if strings.Contains(out.String(), "Sup3rSecret") {
		t.Errorf("printed the password:\n%s", &out)
	}
}

// TestParseRefusesWhatTheServiceWould: settings with which every
// submission would be refused by the service (a score range whose span
// overflows into NaN scores, player ids it does not take, a -url with a
// query that every submission would carry) are start-up
// errors, not a run of 400s.
func TestParseRefusesWhatTheServiceWould(t *testing.T) {
	keys := env(map[string]string{"SIGNING_KEYS": "new:" + vectorSecret})
	for _, args := range [][]string{
		{"-min-score", "-1e308", "-max-score", "1e308"},
		{"-prefix", "player "}, {"-prefix", "a\tb"}, {"-prefix", "\u202e"}, {"-prefix", "\xff"},
		{"-prefix", strings.Repeat("p", 62)},
		{"-prefix", strings.Repeat("p", 61), "-players", "1000"},
		{"-url", "http://127.0.0.1:8080/?x=1"}, {"-url", "http://127.0.0.1:8080/?"}, {"-url", "http://127.0.0.1:8080/#top"},
	} {
		if _, err := parse(args, keys, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	for _, args := range [][]string{
		{"-prefix", ""}, {"-prefix", strings.Repeat("p", 61)}, {"-prefix", strings.Repeat("p", 60), "-players", "1000"}, {"-prefix", "jugador-ñ-"},
		{"-min-score", "-8e307", "-max-score", "8e307"},
	} {
		if _, err := parse(args, keys, io.Discard); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestParseArgsNotEchoed: arguments left after the flags are not shown in
// the error: `loadgen $SIGNING_KEYS` is an easy slip, and no error shows a
// secret.
func TestParseArgsNotEchoed(t *testing.T) {
	keys := env(map[string]string{"SIGNING_KEYS": "new:" + vectorSecret})
	_, err := parse([]string{"new:" + vectorSecret}, keys, io.Discard)
	if err == nil || strings.Contains(err.Error(), vectorSecret) {
		t.Fatalf("error %v: want one, without the secret", err)
	}
}
