// Package testnet holds the network helpers the examples' tests share.
package testnet

import (
	"net"
	"sync/atomic"
	"testing"
)

// CountingListener listens on a loopback port where nothing answers: it
// accepts each connection, counts it and closes it, until the test ends.
// It stands for a server a program must not call (-h, bad flags); addr is
// its host:port, accepted the connections made so far.
func CountingListener(t testing.TB) (addr string, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String(), accepted
}
