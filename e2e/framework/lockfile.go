package framework

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// lockFile is an exclusive flock(2) on a file that exists only while it is
// held: release removes the file, then its directory if that is empty, and
// only then unlocks. So a directory of such locks lists the ones in use and
// nothing outlives the last holder but what a killed one left: its file,
// which the next taker of the name locks, reuses and removes.
type lockFile struct {
	f    *os.File
	path string
}

// errLockMoved: the file opened or locked is no longer at its path, or its
// directory went in between; the taker tries again.
var errLockMoved = errors.New("lock file removed by its holder's release")

// lockTries bounds tryLockFile's retries on errLockMoved; past them the
// name counts as taken.
const lockTries = 100

// tryLockFile locks path, creating it and its directory, without waiting.
// It returns nil and no error when another holder has it.
func tryLockFile(path string) (*lockFile, error) {
	for range lockTries {
		f, err := openLockFile(path)
		if errors.Is(err, errLockMoved) {
			continue
		}
		if err != nil {
			return nil, err
		}
		l, err := lockOpened(f, path)
		if errors.Is(err, errLockMoved) {
			continue
		}
		return l, err
	}
	return nil, nil
}

// openLockFile opens path, creating it and its directory. A release may
// remove the directory at any point: MkdirAll then finds it made and gone
// (ErrExist), or the open finds it gone (ErrNotExist); both are
// errLockMoved.
func openLockFile(path string) (*os.File, error) {
	err := os.MkdirAll(filepath.Dir(path), 0o700)
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600); err == nil {
			return f, nil
		}
	}
	if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
		return nil, errLockMoved
	}
	return nil, err
}

// lockOpened locks f, opened at path, without waiting: nil and no error if
// another holds it. A taker can open the file just before its holder
// removes it, then lock a file no longer at the path while another taker
// locks a new one there: two holders. So, once locked, lockOpened checks
// that the path still names f, and otherwise gives it up (errLockMoved).
// f is closed unless the lock is returned.
func lockOpened(f *os.File, path string) (*lockFile, error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	held, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if now, err := os.Stat(path); err == nil && os.SameFile(held, now) {
		return &lockFile{f: f, path: path}, nil
	}
	f.Close()
	return nil, errLockMoved
}

// release removes the lock's file, and its directory if empty, then
// unlocks.
func (l *lockFile) release() {
	_ = os.Remove(l.path)
	_ = os.Remove(filepath.Dir(l.path)) // fails while other locks are in it
	l.f.Close()
}
