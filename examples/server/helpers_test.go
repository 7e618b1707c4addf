package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// Two keys, as during a rotation: both must be accepted.
var testKeys = map[string][]byte{
	"gs1": []byte("gs1-secret-0123456789abcdef0123456789abcdef"),
	"gs2": []byte("gs2-secret-0123456789abcdef0123456789abcdef"),
}

// fixture is a server on one test backend, with its background work
// running and stopped at cleanup.
type fixture struct {
	t     testing.TB
	b     *testredis.Backend
	srv   *server
	h     http.Handler
	board string
}

func testConfig(board string) config {
	return config{
		Addr: "127.0.0.1:0", Board: board,
		MinScore: 0, MaxScore: 1e6,
		Keys: testKeys, Skew: time.Minute,
		Rate: 1000, Burst: 1000, // tests that need the limit set their own
		StreamsPerClient: 10, RedisTimeout: 3 * time.Second,
		ShutdownTimeout: 5 * time.Second, LogLevel: "info", LogFormat: "text",
	}
}

func newFixture(t testing.TB, b *testredis.Backend, edit ...func(*config)) *fixture {
	t.Helper()
	return newFixtureAt(t, b, time.Now, edit...)
}

// fixedClock is a clock that stays at now: a test that checks period
// labels (a day, a week, a month) against its own reading of the time
// gets the server's, whenever it runs (a test crossing midnight UTC, or a
// week's or month's start, compared two periods). Signed requests, which
// carry time.Now, stay within the skew for the test's minute.
func fixedClock() func() time.Time {
	now := time.Now().UTC()
	return func() time.Time { return now }
}

// newFixtureAt is newFixture with the server's clock now.
func newFixtureAt(t testing.TB, b *testredis.Backend, now func() time.Time, edit ...func(*config)) *fixture {
	t.Helper()
	board := b.BoardName(t)
	cfg := testConfig(board)
	for _, e := range edit {
		e(&cfg)
	}
	srv, err := newServer(cfg, b.Client, slog.New(slog.DiscardHandler), now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		srv.close()
		<-done
		// The service's own keys expire by themselves; on a shared Redis
		// they are removed at once all the same.
		c := b.Client.Client
		for _, k := range b.Keys(t, "lbsrv:"+board+":*") {
			_ = c.Do(context.Background(), c.B().Del().Key(k).Build()).Error()
		}
	})
	return &fixture{t: t, b: b, srv: srv, h: srv.handler(), board: board}
}

// signedReq is a POST /api/v1/scores signed with key gs1 now, with a fresh
// nonce; edit changes it before it is signed (header edits after).
type signedReq struct {
	method, uri, body string
	keyID             string
	secret            []byte
	ts                string
	nonce             string
}

func newSigned(body string) *signedReq {
	return &signedReq{
		method: http.MethodPost, uri: "/api/v1/scores", body: body,
		keyID: "gs1", secret: testKeys["gs1"],
		ts:    strconv.FormatInt(time.Now().Unix(), 10),
		nonce: newNonce(),
	}
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *signedReq) request() *http.Request {
	r := httptest.NewRequest(s.method, s.uri, strings.NewReader(s.body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(headerKeyID, s.keyID)
	r.Header.Set(headerTimestamp, s.ts)
	r.Header.Set(headerNonce, s.nonce)
	r.Header.Set(headerSignature, sign(s.secret, s.method, s.uri, s.ts, s.nonce, []byte(s.body)))
	return r
}

func (f *fixture) do(r *http.Request) *httptest.ResponseRecorder {
	f.t.Helper()
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, r)
	return rec
}

func (f *fixture) get(uri string) *httptest.ResponseRecorder {
	f.t.Helper()
	return f.do(httptest.NewRequest(http.MethodGet, uri, nil))
}

// submit posts a signed score and wants 200.
func (f *fixture) submit(user string, score float64) submitResponse {
	f.t.Helper()
	return f.submitBody(map[string]any{"userId": user, "score": score})
}

// submitNamed submits with a display name.
func (f *fixture) submitNamed(user string, score float64, name string) submitResponse {
	f.t.Helper()
	return f.submitBody(map[string]any{"userId": user, "score": score, "name": name})
}

func (f *fixture) submitBody(fields map[string]any) submitResponse {
	f.t.Helper()
	user, score := fields["userId"], fields["score"]
	body, _ := json.Marshal(fields)
	rec := f.do(newSigned(string(body)).request())
	if rec.Code != http.StatusOK {
		f.t.Fatalf("submit %s %v: %d %s", user, score, rec.Code, rec.Body)
	}
	return decode[submitResponse](f.t, rec)
}

func decode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, want JSON; body %s", ct, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return v
}

// wantError checks a status and the JSON error's field.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, field string) errorBody {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	e := decode[errorBody](t, rec)
	if e.Error == "" || e.Field != field {
		t.Fatalf("error %+v, want a message and field %q", e, field)
	}
	return e
}

// unchanged fails unless the board's keys are exactly as before.
func (f *fixture) unchanged(before map[string]string) {
	f.t.Helper()
	after := f.b.Snapshot(f.t, f.board)
	if len(after) != len(before) {
		f.t.Fatalf("board keys changed: before %v, after %v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			f.t.Fatalf("board key %s changed: %q -> %q", k, v, after[k])
		}
	}
}

func ioNopCloser(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }

// deref reads an optional JSON number; nil reads as -1, which no test
// expects.
func deref[T int64 | float64](p *T) T {
	if p == nil {
		return -1
	}
	return *p
}
