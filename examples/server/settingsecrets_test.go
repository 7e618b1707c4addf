package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestRedisURLElsewhereHidesPassword: a Redis URL given where another
// setting goes (an argument, as in `server $REDIS_URL`, the listen
// address, a setting read as a number or a duration) is refused with an error that shows no password, as for
// REDIS_URL itself: no error shows a Redis URL with its credentials. The
// error quoted the argument, and the address, whole.
func TestRedisURLElsewhereHidesPassword(t *testing.T) {
	const pw = "Sup3rSecretPw"
	url := "redis://user:" + pw + "@127.0.0.1:6379"
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{args: []string{url}},
		{args: []string{"-addr", url}},
		{env: map[string]string{"ADDR": url}},
		{args: []string{"-addr", "127.0.0.1:0", url + "/0?password=" + pw}},
		// A setting read as a number or a duration, given the URL.
		{env: map[string]string{"SCORE_MIN": url}},
		{env: map[string]string{"REDIS_TIMEOUT": url}},
		{env: map[string]string{"SUBMIT_BURST": url}},
	} {
		err := run(context.Background(), c.args, envOf(c.env), io.Discard, io.Discard)
		if err == nil {
			t.Errorf("args %q, env %v: no error", c.args, c.env)
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("args %q, env %v: error %q shows the password", c.args, c.env, err)
		}
	}
}
