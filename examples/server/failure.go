package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// statusClientClosed is nginx's "client closed request": the client gave up
// before the answer, so this status only ever reaches logs and metrics. It
// is kept apart from 5xx so that players closing a page never look like an
// outage.
const statusClientClosed = 499

// errClientClosed marks an error of the client's connection, not of
// Redis: the client went away while it sent its request. Its context may
// not have ended yet, as the server notices a closed connection only once
// the body is read, so classify needs the mark to answer 499.
var errClientClosed = errors.New("client closed request")

// classify decides what a failed call to Redis (directly or through the
// SDK) means for the client; every handler answers through it. reqCtx is
// the request's own context, not one with the Redis deadline: when the
// client has gone, the call fails with whatever error the cut produced,
// so that is checked first.
func classify(reqCtx context.Context, err error) (int, string) {
	switch {
	case errors.Is(reqCtx.Err(), context.Canceled), errors.Is(err, errClientClosed):
		return statusClientClosed, "client closed request"
	case errors.Is(err, leaderboard.ErrNotRanked):
		return http.StatusNotFound, "not ranked in this window"
	case errors.Is(err, leaderboard.ErrExpired):
		return http.StatusGone, "that period is past its retention"
	case errors.Is(err, leaderboard.ErrInvalidMember):
		return http.StatusBadRequest, "invalid userId"
	case errors.Is(err, leaderboard.ErrInvalidScore), errors.Is(err, leaderboard.ErrPrecision):
		return http.StatusBadRequest, "invalid score"
	case errors.Is(err, leaderboard.ErrInvalidArgument):
		return http.StatusBadRequest, "invalid argument"
	case unavailable(err):
		return http.StatusServiceUnavailable, "Redis is unavailable or did not answer in time"
	}
	return http.StatusInternalServerError, "internal error"
}

// redisBusy are the prefixes of Redis error replies that mean "not now"
// rather than "wrong": the server is loading, failing over, out of memory
// or of disk (MISCONF: writes stop while snapshots fail), a replica, or at
// its connection limit (its reply to a new connection's handshake).
// The last is a generic ERR reply, whose "ERR " a client may strip.
var redisBusy = []string{"LOADING", "BUSY", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "OOM", "NOREPLICAS",
	"MISCONF", "max number of clients reached"}

// unavailable reports whether err means Redis could not be reached or did
// not answer in time: a deadline, a dial or connection error, a connection
// cut (EOF), a client that is closing or has no node, or a "not now" reply.
func unavailable(err error) bool {
	var netErr net.Error
	var redisErr *rueidis.RedisError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// Canceled without the client gone: rueidis cut a dial at Close.
		return true
	case errors.Is(err, rueidis.ErrClosing), errors.Is(err, rueidis.ErrNoAddr),
		errors.Is(err, rueidis.ErrNoSlot), errors.Is(err, rueidis.ErrDoCacheAborted):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &netErr):
		return true
	case errors.As(err, &redisErr) && !redisErr.IsNil():
		msg := strings.TrimPrefix(redisErr.Error(), "ERR ")
		for _, p := range redisBusy {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
	}
	return false
}

// fail answers a failed Redis or SDK call of any handler: 4xx for what the
// client got wrong (field names the request part), 499 for a client that
// went away, 503 for an unreachable or slow Redis, 500 for the rest. A
// submission's outcome is counted here too. Only 5xx are logged above info:
// a player closing a page is no operator's concern.
func (s *server) fail(w http.ResponseWriter, r *http.Request, op string, err error, field string) {
	status, msg := classify(r.Context(), err)
	switch {
	case errors.Is(err, leaderboard.ErrInvalidMember):
		field = "userId"
	case errors.Is(err, leaderboard.ErrInvalidScore), errors.Is(err, leaderboard.ErrPrecision):
		field = "score"
	case errors.Is(err, leaderboard.ErrExpired):
		field = "at"
	case status >= 500 || status == statusClientClosed:
		field = ""
	}
	level := slog.LevelError
	switch {
	case status == statusClientClosed:
		level = slog.LevelDebug
	case status < 500:
		level = slog.LevelInfo
	}
	s.log.Log(r.Context(), level, op, "method", clip(r.Method), "path", clip(r.URL.Path), "status", status, "err", err)
	if r.Pattern == patternSubmit {
		s.metrics.submits.WithLabelValues(outcomeOf(status)).Inc()
	}
	writeError(w, status, msg, field)
}

// outcomeOf is the submission outcome of a status that fail answered.
func outcomeOf(status int) string {
	switch {
	case status == statusClientClosed:
		return outcomeCancelled
	case status < 500:
		return outcomeInvalid
	}
	return outcomeError
}

// maxLogged bounds a request's method and path in a log line: a client
// chooses them, up to the header limit.
const maxLogged = 200

func clip(s string) string {
	if len(s) <= maxLogged {
		return s
	}
	return s[:maxLogged] + "…"
}
