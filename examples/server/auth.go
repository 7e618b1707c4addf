package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// The headers of a signed request. README.md describes the scheme for
// clients in other languages.
const (
	headerKeyID     = "X-LB-Key-Id"
	headerTimestamp = "X-LB-Timestamp" // unix seconds
	headerNonce     = "X-LB-Nonce"     // 16..64 of [A-Za-z0-9_-], new for every request
	headerSignature = "X-LB-Signature" // hex HMAC-SHA256 of canonicalRequest
)

var noncePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

// canonicalRequest is what a signature covers: the method, the request URI
// (path and query, as sent), the timestamp, the nonce and the body's SHA-256,
// one per line. Hashing the body keeps the string one line per part whatever
// the body holds.
func canonicalRequest(method, uri, ts, nonce string, body []byte) []byte {
	sum := sha256.Sum256(body)
	return fmt.Appendf(nil, "%s\n%s\n%s\n%s\n%s", method, uri, ts, nonce, hex.EncodeToString(sum[:]))
}

// sign returns the hex signature of a request; the tests and game servers
// written in Go use it.
func sign(secret []byte, method, uri, ts, nonce string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(canonicalRequest(method, uri, ts, nonce, body))
	return hex.EncodeToString(m.Sum(nil))
}

// authError is a refused credential. Every one answers 401; the reason tells
// an honest client what to fix and gives a forger nothing it does not know.
type authError struct {
	header string
	reason string
	replay bool
}

func (e *authError) Error() string { return e.reason }

// verifier checks signed requests and remembers their nonces.
type verifier struct {
	keys   map[string][]byte
	skew   time.Duration
	now    func() time.Time
	client rueidis.Client
	prefix string // of the nonce keys
}

// verify checks r's signature over body, then records its nonce so the same
// request cannot be sent twice. Only a correctly signed request reaches
// Redis: a forger cannot fill it with nonces.
func (v *verifier) verify(ctx context.Context, r *http.Request, body []byte) error {
	id := r.Header.Get(headerKeyID)
	ts := r.Header.Get(headerTimestamp)
	nonce := r.Header.Get(headerNonce)
	sig := r.Header.Get(headerSignature)
	switch {
	case sig == "":
		return &authError{header: headerSignature, reason: "missing signature"}
	case id == "":
		return &authError{header: headerKeyID, reason: "missing key id"}
	case ts == "":
		return &authError{header: headerTimestamp, reason: "missing timestamp"}
	case nonce == "":
		return &authError{header: headerNonce, reason: "missing nonce"}
	case !noncePattern.MatchString(nonce):
		return &authError{header: headerNonce, reason: "nonce must be 16 to 64 of A-Z, a-z, 0-9, '_' and '-'"}
	}
	secret := v.keys[id]
	if secret == nil {
		return &authError{header: headerKeyID, reason: "unknown key id"}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return &authError{header: headerTimestamp, reason: "timestamp must be unix seconds"}
	}
	if !withinSkew(v.now(), sec, v.skew) {
		return &authError{header: headerTimestamp, reason: "timestamp outside the allowed clock skew"}
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return &authError{header: headerSignature, reason: "signature must be 64 hex digits"}
	}
	m := hmac.New(sha256.New, secret)
	m.Write(canonicalRequest(r.Method, r.URL.RequestURI(), ts, nonce, body))
	if !hmac.Equal(got, m.Sum(nil)) {
		return &authError{header: headerSignature, reason: "bad signature"}
	}
	// A request is accepted while its timestamp is within skew of now
	// (until ts+skew), so its nonce must be remembered until then: at most
	// 2*skew from now; a second more spares the edge from clock steps.
	key := v.prefix + "nonce:" + id + ":" + nonce
	err = v.client.Do(ctx, v.client.B().Set().Key(key).Value(ts).Nx().Px(2*v.skew+time.Second).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return &authError{header: headerNonce, reason: "replayed request", replay: true}
	}
	return err
}

// withinSkew reports whether ts (unix seconds) is at most skew from now,
// exactly: a skew of 1.5s is not cut to 1s, nor now to its second. It
// takes any int64 ts: ts is first checked against now's window in whole
// seconds, a second wider than skew and clamped to the int64 range, so
// that it is never subtracted from now unless it is close (now - ts
// overflows for a ts far in the past or future).
func withinSkew(now time.Time, ts int64, skew time.Duration) bool {
	if skew < 0 {
		return false
	}
	secs := int64(skew/time.Second) + 1
	n := now.Unix()
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if n >= math.MinInt64+secs {
		lo = n - secs
	}
	if n <= math.MaxInt64-secs {
		hi = n + secs
	}
	if ts < lo || ts > hi {
		return false
	}
	// |n - ts| <= secs: the difference and the duration fit in an int64.
	d := time.Duration(n-ts)*time.Second + time.Duration(now.Nanosecond())
	return -skew <= d && d <= skew
}
