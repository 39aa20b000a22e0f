package call

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/reply"
)

// workdirRunner is a runner on one person's machine whose roots are home.
func workdirRunner(home string) *Runner {
	return NewRunner(Backends{}, nil, files.NewPolicy(files.Config{Home: home, Roots: []string{home}}),
		DefaultOutputTokens, nil)
}

// checkDir is the refusal checkWorkingDirectory makes of dir, or "".
func checkDir(r *Runner, dir string) string {
	out := r.checkWorkingDirectory("chat", map[string]any{"working_directory_absolute_path": dir})
	if out == nil {
		return ""
	}
	return out.Reply.Content
}

func TestWorkingDirectoryPassLapses(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	wd := filepath.Join(home, "proj")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		r := workdirRunner(home)
		if got := checkDir(r, wd); got != "" {
			t.Fatalf("an existing directory was refused: %s", got)
		}
		if err := os.Remove(wd); err != nil {
			t.Fatal(err)
		}
		if got := checkDir(r, wd); got != "" {
			t.Errorf("within %v of passing, the check looked again: %s", dirCheckLasts, got)
		}
		time.Sleep(dirCheckLasts)
		if got := checkDir(r, wd); !strings.Contains(got, "is not an existing directory") {
			t.Errorf("after %v, a removed directory was not refused: %q", dirCheckLasts, got)
		}
	})
}

func TestWorkingDirectoryFailureIsNotKept(t *testing.T) {
	t.Parallel()
	home, outside := t.TempDir(), t.TempDir()
	r := workdirRunner(home)
	wd := filepath.Join(home, "later")
	if got := checkDir(r, wd); !strings.Contains(got, "is not an existing directory") {
		t.Fatalf("a missing directory was not refused: %q", got)
	}
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := checkDir(r, wd); got != "" {
		t.Errorf("a directory made after its refusal is still refused: %s", got)
	}
	for range 2 {
		if got := checkDir(r, outside); !strings.Contains(got, "outside the directories zen may read") {
			t.Errorf("a directory outside the roots was not refused: %q", got)
		}
	}
	if got := checkDir(r, "relative/dir"); !strings.Contains(got, "must be a FULL absolute path") {
		t.Errorf("a relative directory was not refused: %q", got)
	}
}

// TestWorkingDirectoryRelinkedAfterPassing: a working directory that passed
// and is then made a link out of the roots passes the early check for a
// while, but no code is written through it.
func TestWorkingDirectoryRelinkedAfterPassing(t *testing.T) {
	t.Parallel()
	home, outside := t.TempDir(), t.TempDir()
	wd := filepath.Join(home, "proj")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	r := workdirRunner(home)
	if got := checkDir(r, wd); got != "" {
		t.Fatalf("an existing directory was refused: %s", got)
	}
	if err := os.Remove(wd); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, wd); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"working_directory_absolute_path": wd}
	if out := r.checkWorkingDirectory("chat", args); out != nil {
		t.Fatalf("the check looked again within its window: %s", out.Reply.Content)
	}
	answer := &reply.Reply{Content: "answer"}
	r.saveGeneratedCode(answer, args, "the code")
	if !strings.Contains(answer.Content, "zen could not save the generated code") {
		t.Errorf("the answer does not say the code was not saved:\n%s", answer.Content)
	}
	if _, err := os.Stat(filepath.Join(outside, GeneratedCodeFile)); err == nil {
		t.Errorf("code was written outside the roots, through the relinked directory")
	}
}

// TestCheckedDirsForgetLapsedPasses: a pass that lapsed is dropped by the
// next one, and a name longer than a path can be is never kept, so a quiet
// edge holds no more than a few short names.
func TestCheckedDirsForgetLapsedPasses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := workdirRunner(t.TempDir())
		r.dirPassed("/old")
		time.Sleep(dirCheckLasts)
		r.dirPassed("/new")
		if _, kept := r.dirs.m["/old"]; kept {
			t.Errorf("a lapsed pass is still kept beside a new one")
		}
		long := "/proj" + strings.Repeat("/.", maxCheckedDirLen)
		r.dirPassed(long)
		if _, kept := r.dirs.get(long); kept {
			t.Errorf("a name of %d bytes was kept", len(long))
		}
	})
}

// TestSharedServerLooksNothingUp: on a shared server the working directory
// is on the client's disk; the edge neither looks it up nor keeps it.
func TestSharedServerLooksNothingUp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := NewRunner(Backends{}, nil, files.NewPolicy(files.Config{Home: home, Roots: []string{home},
		Shared: "ZEN_AUTH_TOKENS_FILE names its clients"}), DefaultOutputTokens, nil)
	if got := checkDir(r, "/on/the/clients/disk"); got != "" {
		t.Errorf("a shared server refused a client's directory: %s", got)
	}
	if n := len(r.dirs.m); n != 0 {
		t.Errorf("a shared server kept %d directories", n)
	}
}

// BenchmarkWorkingDirectoryCheck: the check of a working directory as a
// continued call makes it, looked up on disk and passed lately. The
// benchmark's directory lies as deep as the test's temporary directories.
//
//	go test -run '^$' -bench WorkingDirectoryCheck ./services/edge/internal/call
func BenchmarkWorkingDirectoryCheck(b *testing.B) {
	home := b.TempDir()
	wd := filepath.Join(home, "proj")
	if err := os.Mkdir(wd, 0o755); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"working_directory_absolute_path": wd}
	for _, bc := range []struct {
		name   string
		forget bool
	}{{"looked-up", true}, {"passed-lately", false}} {
		b.Run(bc.name, func(b *testing.B) {
			r := workdirRunner(home)
			for b.Loop() {
				if bc.forget {
					r.dirs = newLapsing[string, struct{}](maxCheckedDirs, dirCheckLasts)
				}
				if out := r.checkWorkingDirectory("chat", args); out != nil {
					b.Fatal(out.Reply.Content)
				}
			}
		})
	}
}

// A working directory longer than any path can be is refused without
// being quoted back: one of 4 MB of U+0085, quoted, made a refusal of
// 12 MB, and an answer of 32 MB.
func TestAWorkingDirectoryLongerThanAnyPathIsNotQuoted(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := workdirRunner(home)
	for _, dir := range []string{"/" + strings.Repeat("\u0085", 1<<20), strings.Repeat("\u0085", 1<<20)} {
		if got := checkDir(r, dir); len(got) > 1<<10 || !strings.Contains(got, "longer than") {
			t.Errorf("a working directory of %d bytes: a refusal of %d bytes; want one under 1 KiB saying it is "+
				"too long", len(dir), len(got))
		}
	}
}

// A model name longer than any model's is refused without being quoted,
// wherever a call names one: consensus repeated a name of 1 MB some twenty
// times in its reply, past the client's output limit.
func TestAModelNameLongerThanAnyIsNotQuoted(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("\u00ad", 1<<19)
	for name, args := range map[string]map[string]any{
		"model":     {"model": long},
		"consensus": {"models": []any{map[string]any{"model": "o3"}, map[string]any{"model": long}}},
	} {
		out := checkModelNames("consensus", args)
		if out == nil || !out.IsError || len(out.Reply.Content) > 1<<10 ||
			!strings.Contains(out.Reply.Content, "longer") {
			t.Errorf("%s of %d bytes: %v; want a refusal under 1 KiB saying it is too long", name, len(long), out)
		}
	}
	if out := checkModelNames("chat", map[string]any{"model": "gpt-5", "models": []any{"o3"}}); out != nil {
		t.Errorf("short names refused: %+v", out.Reply)
	}
}
