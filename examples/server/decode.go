package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// fieldError is a 400 naming the part of the request that is wrong.
type fieldError struct {
	field string
	msg   string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func badField(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// readBody reads at most maxBody bytes; a longer body is refused without
// reading the rest. The error is a *fieldError (a 400) for what the client
// sent, or one matching errClientClosed when the client went away before
// the body was whole: that is no bad input, and is answered like any other
// request the client closed (499).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, badField("body", "body over %d bytes", maxBody)
	case err != nil && bodyCut(r, err):
		return nil, fmt.Errorf("%w: read body: %w", errClientClosed, err)
	case err != nil:
		return nil, badField("body", "could not read the body")
	case len(body) == 0:
		return nil, badField("body", "empty body; want {\"userId\": ..., \"score\": ...}")
	}
	return body, nil
}

// bodyCut reports whether a failed body read means the client went away:
// the connection ended before the length it announced (or the last chunk),
// or was reset or closed, or the request's context ended (HTTP/2 resets a
// stream that way). A read that timed out stays a 400: the client was too
// slow, not gone. It is told apart first, as net/http ends the request's
// context on any failed read of the connection, a timeout included.
func bodyCut(r *http.Request, err error) bool {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return r.Context().Err() != nil ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// submitRequest is the body of POST /api/v1/scores.
type submitRequest struct {
	UserID string
	Score  float64
	// Name is the player's display name, shown beside the score; "" when
	// not given, which leaves the name the board has.
	Name string
}

// decodeSubmit reads {"userId": "...", "score": n, "name": "..."} strictly: one
// object, userId and score once, name at most once, nothing else. It walks the
// tokens itself rather than calling json.Unmarshal so that every error can name
// its field, including a literal such as NaN that is not JSON at all.
func decodeSubmit(body []byte, minScore, maxScore float64) (submitRequest, *fieldError) {
	var req submitRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return req, badField("body", "want a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return req, badField("body", "malformed JSON")
		}
		name, _ := t.(string) // an object's keys are strings
		if name == "" {
			return req, badField("body", "empty field name")
		}
		if seen[name] {
			return req, badField(name, "%s given twice", name)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil || !valueEnds(body, dec) {
			// NaN, Infinity, 0x10, 1_000: not JSON, but clearly this field's.
			return req, badField(name, "%s is not a valid JSON value", name)
		}
		if fe := req.set(name, raw, minScore, maxScore); fe != nil {
			return req, fe
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return req, badField("body", "malformed JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, badField("body", "data after the JSON object")
	}
	switch {
	case !seen["userId"]:
		return req, badField("userId", "userId is required")
	case !seen["score"]:
		return req, badField("score", "score is required")
	}
	return req, nil
}

// loneSurrogate reports whether a JSON value holds a \u escape of a UTF-16
// surrogate that is not half of a pair: a high one (D800-DBFF) not
// followed by a low one (DC00-DFFF), or a low one alone.
func loneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := escapedRune(raw[i:])
		switch {
		case !ok:
			i++ // an escape of one character: skip it, as it may be a backslash
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			low, ok := escapedRune(raw[i+6:])
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11 // the pair's two escapes
		default:
			i += 5
		}
	}
	return false
}

// escapedRune reads a \uXXXX escape at the start of b.
func escapedRune(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return rune(n), err == nil
}

// set decodes one field's raw JSON value into req, or says what is wrong
// with it.
func (req *submitRequest) set(name string, raw json.RawMessage, minScore, maxScore float64) *fieldError {
	if !utf8.Valid(raw) {
		// encoding/json would quietly turn the bad bytes into U+FFFD.
		return badField(name, "%s is not valid UTF-8", name)
	}
	if loneSurrogate(raw) {
		// So would it a \ud800 that no low surrogate follows: two ids that
		// differ there would become one player.
		return badField(name, "%s holds an unpaired UTF-16 surrogate escape", name)
	}
	var fe *fieldError
	switch name {
	case "userId":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return badField(name, "userId must be a string")
		}
		req.UserID, fe = s, checkUserID(s)
	case "score":
		req.Score, fe = parseScore(raw, minScore, maxScore)
	case "name":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return badField(name, "name must be a string")
		}
		req.Name, fe = s, checkName(s)
	default:
		fe = badField(name, "unknown field %q", name)
	}
	return fe
}

// valueEnds reports whether the value just decoded is followed by what may
// follow a value in an object; otherwise the value was cut short ("0x10"
// decodes as 0, then "x10" is left).
func valueEnds(body []byte, dec *json.Decoder) bool {
	for _, c := range body[dec.InputOffset():] {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case ',', '}':
			return true
		}
		return false
	}
	return true // the end of the input: reported as truncated after
}

// parseScore takes a JSON number only: not a string holding one, not null.
func parseScore(raw json.RawMessage, minScore, maxScore float64) (float64, *fieldError) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, badField("score", "score must be a number")
	}
	// As the reads take numbers: one that overflows (1e400) or a non-zero
	// one that rounds to zero (1e-400) is refused, not stored as another.
	f, ok := parseDecimal(string(raw))
	if !ok {
		return 0, badField("score", "score %s is not a finite number", raw)
	}
	if f < minScore || f > maxScore {
		return 0, badField("score", "score must be between %v and %v", minScore, maxScore)
	}
	return f, nil
}

// maxName is the longest display name, in bytes.
const maxName = 64

// checkName allows 1..maxName bytes of UTF-8 without control characters
// (unicode.IsControl) or bidirectional controls, and without a space
// (unicode.IsSpace) at either end; spaces inside and format characters such
// as the zero-width joiners of emoji sequences and of Persian or Indic
// names are allowed. A name shows on a public page, as text (the page
// never reads it as HTML).
func checkName(s string) *fieldError {
	switch {
	case s == "":
		return badField("name", "name is empty; leave it out to keep the name")
	case len(s) > maxName:
		return badField("name", "name over %d bytes", maxName)
	case !utf8.ValidString(s):
		return badField("name", "name is not valid UTF-8")
	case strings.TrimSpace(s) != s:
		return badField("name", "name starts or ends with a space")
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return badField("name", "name may not hold control characters")
		case isBidiControl(r):
			return badField("name", "name %s", bidiRefused)
		}
	}
	return nil
}

// checkUserID allows 1..maxUserID bytes of UTF-8 without spaces
// (unicode.IsSpace, look-alike blanks included), control characters
// (unicode.IsControl) or bidirectional controls: ids show on a public page
// and in logs, where those only cause trouble.
func checkUserID(s string) *fieldError {
	switch {
	case s == "":
		return badField("userId", "userId is empty")
	case len(s) > maxUserID:
		return badField("userId", "userId over %d bytes", maxUserID)
	case !utf8.ValidString(s):
		return badField("userId", "userId is not valid UTF-8")
	}
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return badField("userId", "userId may not hold spaces or control characters")
		case isBidiControl(r):
			return badField("userId", "userId %s", bidiRefused)
		}
	}
	return nil
}

// bidiRefused ends the error of a name or id holding a bidirectional
// control.
const bidiRefused = "may not hold bidirectional embedding, override or isolate characters (U+202A to U+202E, U+2066 to U+2069)"

// isBidiControl reports whether r opens or closes a bidirectional
// embedding, override or isolate. Though format characters like the
// joiners, they are refused: one in a name or id reorders the text after
// it (on the page, in a log line, in a terminal), so that an entry could
// pass for another's. The marks (U+200E, U+200F, U+061C) reorder nothing
// and stay allowed.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
