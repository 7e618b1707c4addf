package testnet

import (
	"net"
	"testing"
	"time"
)

func TestCountingListener(t *testing.T) {
	addr, accepted := CountingListener(t)
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := accepted.Load(); n != 2 {
		t.Fatalf("accepted %d connections, want 2", n)
	}
}
