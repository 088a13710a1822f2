package loopback

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func dial(port int32) error {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))), 5*time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

// TestServeAnswersUntilTheTestEnds: a served port accepts connects while its
// test runs and refuses them once the test's cleanup has closed it; a
// Refusing port refuses.
func TestServeAnswersUntilTheTestEnds(t *testing.T) {
	var port int32
	t.Run("served", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		Serve(t, ln)
		port = int32(ln.Addr().(*net.TCPAddr).Port)
		require.NoError(t, dial(port))
	})
	require.Error(t, dial(port), "the port is closed with its test")

	refusing, err := Refusing("127.0.0.1")
	require.NoError(t, err)
	require.Error(t, dial(refusing))
}
