package framework

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLockFileExcludesAndLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	path := filepath.Join(dir, "7.lock")

	a, err := tryLockFile(path)
	require.NoError(t, err)
	require.NotNil(t, a)
	b, err := tryLockFile(path)
	require.NoError(t, err)
	require.Nil(t, b, "a second taker got the lock")

	other, err := tryLockFile(filepath.Join(dir, "8.lock"))
	require.NoError(t, err)
	require.NotNil(t, other)
	a.release()
	require.NoFileExists(t, path)
	require.DirExists(t, dir, "removed while 8.lock was in it")
	other.release()
	require.NoDirExists(t, dir)

	c, err := tryLockFile(path)
	require.NoError(t, err)
	require.NotNil(t, c, "free once released")
	c.release()
}

func TestLockFileReusesAKilledHoldersFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "7.lock")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, nil, 0o600)) // its holder died: no lock on it

	l, err := tryLockFile(path)
	require.NoError(t, err)
	require.NotNil(t, l)
	l.release()
	require.NoFileExists(t, path)
}

// TestLockFileOpenedBeforeItsRelease plays the race that removing lock
// files opens: b opens the file while a holds it, a releases (removing it),
// c creates and locks a new one at the path, and only then does b lock the
// file it opened, now free. b must not count as a holder beside c.
func TestLockFileOpenedBeforeItsRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "7.lock")
	a, err := tryLockFile(path)
	require.NoError(t, err)
	require.NotNil(t, a)
	opened, err := openLockFile(path)
	require.NoError(t, err)

	a.release()
	c, err := tryLockFile(path)
	require.NoError(t, err)
	require.NotNil(t, c)
	defer c.release()

	b, err := lockOpened(opened, path)
	require.ErrorIs(t, err, errLockMoved)
	require.Nil(t, b, "two holders of %s", path)
}
