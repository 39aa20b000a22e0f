package files

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Another process that can rename entries under a root may change what a
// checked path names before zen reads it: a link to a file out of the
// roots, a FIFO, a file that has grown. What zen reads is the file it
// checked, or nothing. The swaps happen between the check and the read
// (checkedHook), as a racing process's would; the tests share the hook,
// so they do not run in parallel.

// swapAfterCheck has swap run once the path the call named has passed its
// checks, and no longer once the test ends.
func swapAfterCheck(t *testing.T, swap func()) {
	t.Helper()
	checkedHook = func(string) { swap() }
	t.Cleanup(func() { checkedHook = func(string) {} })
}

func TestADirectorySwappedForALinkOutOfTheRootsIsNotRead(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "race", "notes.txt"), "legit notes")
	write(t, filepath.Join(outside, "notes.txt"), "SECRET-OUTSIDE-THE-ROOTS")
	write(t, filepath.Join(root, "race", "shot.png"), "png")
	write(t, filepath.Join(outside, "shot.png"), "SECRET-IMAGE-OUTSIDE")
	swap := func() {
		if err := os.Rename(filepath.Join(root, "race"), filepath.Join(root, "race.old")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, "race")); err != nil {
			t.Error(err)
		}
	}
	unswap := func() {
		_ = os.Remove(filepath.Join(root, "race"))
		_ = os.Rename(filepath.Join(root, "race.old"), filepath.Join(root, "race"))
	}
	swapAfterCheck(t, swap)
	f, err := rootedAt(root).Read(filepath.Join(root, "race", "notes.txt"))
	if strings.Contains(f.Content, "SECRET") || !IsSkipped(err) {
		t.Errorf("Read after the swap: %q, %v; want it skipped, unread", f.Content, err)
	}
	unswap()
	img, err := rootedAt(root).ReadImage(filepath.Join(root, "race", "shot.png"))
	if err == nil || strings.Contains(img.URL, "U0VDUkVU") { // "SECRET" in base64
		t.Errorf("ReadImage after the swap: %q, %v; want it refused, unread", img.URL, err)
	}
}

func TestAFileSwappedForAFIFOIsNotWaitedOn(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "notes.txt")
	write(t, path, "notes")
	swapAfterCheck(t, func() {
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Error(err)
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := rootedAt(root).Read(path)
		done <- err
	}()
	select {
	case err := <-done:
		if !IsSkipped(err) {
			t.Errorf("Read of a FIFO: %v; want it skipped", err)
		}
	case <-time.After(10 * time.Second):
		// Let the reader go before the test's directory is removed.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		t.Fatal("Read of a FIFO swapped in after its check waits for a writer")
	}
}

func TestAFileThatGrowsPastTheLimitAfterItsCheckIsNotReadWhole(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "log.txt")
	write(t, path, "small")
	swapAfterCheck(t, func() {
		if err := os.WriteFile(path, []byte(strings.Repeat("x", 3*MaxFileBytes)), 0o644); err != nil {
			t.Error(err)
		}
	})
	f, err := rootedAt(root).Read(path)
	if len(f.Content) > MaxFileBytes || !IsSkipped(err) {
		t.Errorf("Read of a file grown to %d bytes: %d bytes read, %v; want it skipped", 3*MaxFileBytes,
			len(f.Content), err)
	}
	shot := filepath.Join(root, "shot.png")
	write(t, shot, "png")
	swapAfterCheck(t, func() {
		if err := os.WriteFile(shot, []byte(strings.Repeat("x", MaxImageBytes+1)), 0o644); err != nil {
			t.Error(err)
		}
	})
	if img, err := rootedAt(root).ReadImage(shot); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("ReadImage of an image grown past the limit: %d bytes, %v; want it refused as too large",
			img.Size, err)
	}
}

// A file that grows after its descriptor was checked is read no further
// than the limit: its size, read first, no longer says how long it is.
func TestAFileIsReadNoFurtherThanTheLimit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "log.txt")
	write(t, path, strings.Repeat("x", 100))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := readAtMost(f, "log.txt", 99)
	if len(raw) != 0 || !IsSkipped(err) || !strings.Contains(err.Error(), "grew past") {
		t.Errorf("reading 100 bytes within 99: %d bytes, %v; want none, skipped as grown", len(raw), err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if raw, err := readAtMost(f, "log.txt", 100); err != nil || len(raw) != 100 {
		t.Errorf("reading 100 bytes within 100: %d bytes, %v", len(raw), err)
	}
}
