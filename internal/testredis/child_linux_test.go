//go:build linux

package testredis

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDieWithTest: a redis-server a test started outlived the test binary
// when go test killed it at its -timeout (no Cleanup runs then). The
// test runs itself as a child that starts a server with DieWithTest and
// waits; killed, the child must take the server with it.
func TestDieWithTest(t *testing.T) {
	if os.Getenv("TESTREDIS_CHILD") == "1" {
		childStartsServer()
		return
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if InCI() {
			t.Fatalf("redis-server is required under CI=true: %v", err)
		}
		t.Skip("no redis-server (run the test command)")
	}
	child := exec.Command(os.Args[0], "-test.run=^TestDieWithTest$")
	child.Env = append(os.Environ(), "TESTREDIS_CHILD=1")
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	port, err := strconv.Atoi(line[:len(line)-1])
	require.NoError(t, err, "the child's line %q", line)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	t.Cleanup(func() { // a server that survived the child
		if c, err := net.Dial("tcp", addr); err == nil {
			_, _ = c.Write([]byte("SHUTDOWN NOSAVE\r\n"))
			c.Close()
		}
	})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err, "the child's server answers")
	c.Close()

	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, 20*time.Millisecond, "the server outlived the process that started it")
}

// childStartsServer starts a redis-server on a free port, prints the port
// once it answers, and waits to be killed.
func childStartsServer() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	for {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			c.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println(port)
	time.Sleep(time.Minute)
}
