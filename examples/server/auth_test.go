package main

import (
	"net/http"
	"testing"
)

// The worked example of README.md, computed with openssl; loadgen's tests
// check the same vector against its own implementation.
func TestSignVector(t *testing.T) {
	got := sign([]byte("example-secret-0123456789abcdef0123"), http.MethodPost, "/api/v1/scores",
		"1764460800", "0123456789abcdef0123456789abcdef", []byte(`{"userId":"player-42","score":8500}`))
	if want := "8f997280c9da09cb72afbebb114595dbbbaae394680fee53223dc5fcce108664"; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}
