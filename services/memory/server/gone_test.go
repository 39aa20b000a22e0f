package server

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

// TestWatchFindsTheDatabaseFileGone: memory with its SQLite file removed
// under it stops serving, logs an error naming the file, and warns its
// callers (the gateway's /readyz); it served on, and every exchange after
// was lost at the next start.
func TestWatchFindsTheDatabaseFileGone(t *testing.T) {
	t.Parallel()
	s, logs, cfg := newLoggedWith(t, map[string]string{"ZEN_DATA_DIR": t.TempDir(), "ZEN_MEMORY_STORE": "sqlite"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serving := make(chan bool, 10)
	go s.Watch(ctx, func(ok bool) { serving <- ok })
	if !<-serving {
		t.Fatal("memory does not serve with its file there")
	}
	if err := os.Remove(cfg.DBPath()); err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-serving:
		if ok {
			t.Fatal("memory says it serves again with its file gone")
		}
	case <-time.After(30 * time.Second): // the watch checks every two seconds
		t.Fatal("memory serves on with its file gone")
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), cfg.DBPath()) {
		t.Errorf("the log does not say so, naming the file:\n%s", logs.String())
	}
	settings, err := s.api.GetSettings(ctx, &memoryv1.GetSettingsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(settings.GetWarnings(), "\n"); !strings.Contains(w, cfg.DBPath()) {
		t.Errorf("settings warnings = %q, want the file named", w)
	}
}
