package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// How live updates reach the page: a submit marks the board changed; at most
// every publishEvery each instance publishes one message on a Redis channel;
// every instance subscribed to it wakes its server-sent-event streams, each
// of which writes at most one event per streamEvery. So a burst of thousands
// of submits costs Redis a few PUBLISHes and each browser a few refreshes a
// second, and a page served by one instance sees scores sent to another.
const (
	publishEvery = 200 * time.Millisecond
	streamEvery  = 250 * time.Millisecond
	keepAlive    = 15 * time.Second
	maxStreams   = 1000 // per instance; STREAMS_PER_CLIENT bounds one client's share
)

// change is the message published on the channel: how many submits the
// instance saw since its last message, and the latest of them.
type change struct {
	Count  int     `json:"count"`
	UserID string  `json:"userId"`
	Score  float64 `json:"score"`
}

// hub fans board changes out to the event streams of this instance.
type hub struct {
	client  rueidis.Client
	channel string
	log     *slog.Logger

	gen atomic.Uint64 // counts the changes received, for caches

	perClient int // streams one client address may hold

	mu       sync.Mutex
	up       chan struct{}            // closed while the subscription to the channel is up
	pending  change                   // submits not yet published
	last     []byte                   // the latest message received
	streams  map[chan struct{}]string // one per open stream, buffered 1, to its client
	byClient map[string]int           // open streams per client address
	closed   bool
}

func newHub(client rueidis.Client, channel string, perClient int, log *slog.Logger) *hub {
	return &hub{
		client: client, channel: channel, log: log, perClient: perClient,
		up: make(chan struct{}), streams: map[chan struct{}]string{}, byClient: map[string]int{},
	}
}

// setSubscribed records whether the subscription to the channel is up.
func (h *hub) setSubscribed(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.up:
		if !on {
			h.up = make(chan struct{})
		}
	default:
		if on {
			close(h.up)
		}
	}
}

// ready waits until the subscription to the channel is up, or ctx ends. A
// stream opened while it is down would never get an event: at start it is
// up within a round trip, and while Redis cannot be reached it is down.
func (h *hub) ready(ctx context.Context) error {
	h.mu.Lock()
	up := h.up
	h.mu.Unlock()
	select {
	case <-up:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("board change subscription is down: %w", ctx.Err())
	}
}

// submitted records an accepted submit, to be published on the next tick.
func (h *hub) submitted(user string, score float64) {
	h.mu.Lock()
	h.pending.Count++
	h.pending.UserID, h.pending.Score = user, score
	h.mu.Unlock()
}

// run publishes and receives changes until ctx ends.
func (h *hub) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); h.publish(ctx) }()
	go func() { defer wg.Done(); h.receive(ctx) }()
	wg.Wait()
}

func (h *hub) publish(ctx context.Context) {
	t := time.NewTicker(publishEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		c := h.pending
		h.pending = change{}
		h.mu.Unlock()
		if c.Count == 0 {
			continue
		}
		msg, _ := json.Marshal(c)
		if err := h.client.Do(ctx, h.client.B().Publish().Channel(h.channel).Message(string(msg)).Build()).Error(); err != nil && ctx.Err() == nil {
			// Pages miss one refresh at worst; they also poll slowly.
			h.log.Warn("publish board change", "err", err)
		}
	}
}

// receive subscribes to the channel, resubscribing after an error until ctx
// ends.
func (h *hub) receive(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		// A connection of its own: miniredis, unlike Redis, refuses other
		// commands on a subscribed connection even under RESP3. Closed, not
		// returned to the pool, as it may still be subscribed.
		dc, release := h.client.Dedicate()
		// Up once Redis confirms the subscription, down when it ends.
		sctx := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
			h.setSubscribed(s.Kind == "subscribe")
		})
		err := dc.Receive(sctx, dc.B().Subscribe().Channel(h.channel).Build(), func(m rueidis.PubSubMessage) {
			h.gen.Add(1) // before the streams wake, so their reads miss the caches
			h.mu.Lock()
			h.last = []byte(m.Message)
			for s := range h.streams {
				select {
				case s <- struct{}{}:
				default: // already woken; it will read the latest message
				}
			}
			h.mu.Unlock()
		})
		h.setSubscribed(false)
		dc.Close()
		release()
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		h.log.Warn("board change subscription ended; resubscribing", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// Why subscribe refused a stream.
var (
	errClientStreams = errors.New("too many event streams from this address")
	errHubFull       = errors.New("too many event streams, or shutting down")
)

// subscribe returns a stream's wake-up channel for a client address, or
// errClientStreams when that client holds its share already, or errHubFull
// when the hub is closed or full. The share per client keeps one client
// from taking every slot.
func (h *hub) subscribe(client string) (chan struct{}, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed || len(h.streams) >= maxStreams:
		return nil, errHubFull
	case h.byClient[client] >= h.perClient:
		return nil, errClientStreams
	}
	s := make(chan struct{}, 1)
	h.streams[s] = client
	h.byClient[client]++
	return s, nil
}

// unsubscribe forgets a stream; after close it is a no-op.
func (h *hub) unsubscribe(s chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if client, ok := h.streams[s]; ok {
		h.forget(s, client)
	}
}

// forget removes a stream; h.mu is held.
func (h *hub) forget(s chan struct{}, client string) {
	delete(h.streams, s)
	if h.byClient[client]--; h.byClient[client] <= 0 {
		delete(h.byClient, client)
	}
	close(s)
}

// latest returns the latest message received.
func (h *hub) latest() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// close ends every stream: http.Server.Shutdown waits for handlers to
// return, and an event stream would otherwise never do so.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s, client := range h.streams {
		h.forget(s, client)
	}
}

// count returns the number of open streams.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.streams)
}

// handleEvents streams "scores" events (server-sent events) to a page. A
// HEAD gets what a GET would (a slot is taken and given back, so a 429 or
// 503 shows too), then the headers only: it has no body to stream, and
// staying would hold the slot and the connection for nothing.
func (s *server) handleEvents(w http.ResponseWriter, r *http.Request) {
	if !noParams(w, r) || !noBody(w, r) {
		return
	}
	wake, ok := s.openStream(w, r)
	if !ok {
		return
	}
	defer s.hub.unsubscribe(wake)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy must not hold events back
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	s.stream(w, r, wake)
}

// stream writes events to an open stream until the client leaves, a write
// fails or the hub closes the stream (shutdown).
func (s *server) stream(w http.ResponseWriter, r *http.Request, wake <-chan struct{}) {
	rc := http.NewResponseController(w)
	// The server's timeouts would cut the stream: no read deadline (the
	// request has been read), and each write gets its own deadline, so a
	// stalled reader is still dropped.
	_ = rc.SetReadDeadline(time.Time{})
	send := func(chunk string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprint(w, chunk); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("retry: 2000\nevent: hello\ndata: {}\n\n") {
		return
	}
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case _, open := <-wake:
			if !open {
				return // shutting down
			}
			data := s.hub.latest()
			if data == nil {
				data = []byte("{}")
			}
			if !send("event: scores\ndata: " + string(data) + "\n\n") {
				return
			}
			// Coalesce: changes during the pause wake the stream once.
			select {
			case <-r.Context().Done():
				return
			case <-time.After(streamEvery):
			}
		case <-ping.C:
			if !send(": keep-alive\n\n") {
				return
			}
		}
	}
}

// noParams answers 400 and returns false unless r has no query
// parameters: a stream takes none.
func noParams(w http.ResponseWriter, r *http.Request) bool {
	if fe := paramsFault(r); fe != nil {
		writeError(w, http.StatusBadRequest, fe.msg, fe.field)
		return false
	}
	return true
}

// noBody answers 400 and returns false when r announces a body, which a
// stream does not take. Left unread, net/http would read it before the
// stream's first write, and the stream lifts the read deadline: a body
// announced but never sent would hold the handler, its stream slot and a
// graceful shutdown for as long as the connection stays open. The answer
// closes the connection, so that net/http does not wait for that body
// either.
func noBody(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength == 0 {
		return true
	}
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusBadRequest, "an event stream takes no request body", "body")
	return false
}

// paramsFault is what is wrong with the query string of a request that
// takes no parameters: nil for none, else one that does not parse (the
// field query) or the alphabetically first parameter.
func paramsFault(r *http.Request) *fieldError {
	v, err := url.ParseQuery(r.URL.RawQuery)
	switch {
	case err != nil:
		return badField("query", "%s", malformedQuery)
	case len(v) > 0:
		return unknownParam(firstKey(v))
	}
	return nil
}

// openStream takes a stream slot for r's client, or answers why not: 429
// when the client holds its share (its own doing; its pages poll slowly
// meanwhile), 503 when the instance is full or shutting down, and 503 as
// from any endpoint that uses Redis when the subscription the stream
// depends on is not up within the Redis timeout.
func (s *server) openStream(w http.ResponseWriter, r *http.Request) (chan struct{}, bool) {
	wake, err := s.hub.subscribe(clientAddr(r.RemoteAddr))
	switch {
	case errors.Is(err, errClientStreams):
		w.Header().Set("Retry-After", strconv.Itoa(int(keepAlive/time.Second)))
		writeError(w, http.StatusTooManyRequests, err.Error(), "")
		return nil, false
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error(), "")
		return nil, false
	}
	ctx, cancel := s.redisCtx(r)
	defer cancel()
	if err := s.hub.ready(ctx); err != nil {
		s.hub.unsubscribe(wake)
		s.fail(w, r, "event stream", err, "") // 503, or 499 when the client left
		return nil, false
	}
	return wake, true
}

// clientAddr is the address a stream is counted against: the peer's IP, or
// for IPv6 its /64, which one client usually holds whole. Behind a reverse
// proxy every client has the proxy's address; forwarded headers are not
// trusted, as any client can set them.
func clientAddr(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.WithZone("").Prefix(64)
	return p.String()
}
