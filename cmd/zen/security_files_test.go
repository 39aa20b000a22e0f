package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fileAttack is one attempt: a call to one of the world's zens, what the
// reply must say, and whether the call must fail.
type fileAttack struct {
	name  string
	zen   func(w *fileWorld) *mcp.ClientSession
	tool  string
	args  func(w *fileWorld) map[string]any
	fails bool
	want  []string // in the reply
	// then checks what else must hold after the call.
	then func(t *testing.T, w *fileWorld)
}

func local(w *fileWorld) *mcp.ClientSession  { return w.local }
func shared(w *fileWorld) *mcp.ClientSession { return w.open }
func rooted(w *fileWorld) *mcp.ClientSession { return w.rooted }

// refused is an attack the call must fail on, saying want.
func refused(name string, zen func(*fileWorld) *mcp.ClientSession, tool string, args func(*fileWorld) map[string]any,
	want ...string) fileAttack {
	return fileAttack{name: name, zen: zen, tool: tool, args: args, fails: true, want: want}
}

// answered is an attack the call survives without reading or writing what
// it must not; it still says want, and then holds.
func answered(name string, zen func(*fileWorld) *mcp.ClientSession, args func(*fileWorld) map[string]any,
	then func(*testing.T, *fileWorld), want ...string) fileAttack {
	return fileAttack{name: name, zen: zen, tool: "chat", args: args, then: then, want: want}
}

// placed turns HOME and OUTSIDE in a path into the world's directories.
func (w *fileWorld) placed(path string) string {
	return strings.NewReplacer("HOME", w.home, "OUTSIDE", w.outside).Replace(path)
}

// chatWith is a chat call in the project naming paths in key.
func chatWith(key string, paths ...string) func(w *fileWorld) map[string]any {
	return func(w *fileWorld) map[string]any {
		list := make([]any, len(paths))
		for i, p := range paths {
			list[i] = w.placed(p)
		}
		return map[string]any{"prompt": "review these", "model": "coder", "working_directory_absolute_path": w.proj,
			key: list}
	}
}

// codeInto is a chat call that makes the model write code, with dir as the
// working directory.
func codeInto(dir string) func(w *fileWorld) map[string]any {
	return func(w *fileWorld) map[string]any {
		return map[string]any{"prompt": writeCode, "model": "coder", "working_directory_absolute_path": w.placed(dir)}
	}
}

// review is the last step of a code review of main.go, with path in key.
func review(key, path string) func(w *fileWorld) map[string]any {
	return func(w *fileWorld) map[string]any {
		return step(1, 1, false, map[string]any{"model": "coder",
			"relevant_files": []any{filepath.Join(w.proj, "main.go")}, key: []any{w.placed(path)}})
	}
}

// sawSource checks that a file's honest marker reached the model.
func sawSource(marker string) func(*testing.T, *fileWorld) {
	return func(t *testing.T, w *fileWorld) {
		if !w.modelSaw(marker) {
			t.Errorf("%s did not reach the model", marker)
		}
	}
}

const (
	sharedRefusal = "zen reads no files on this server: it is shared (ZEN_AUTH_TOKENS_FILE names its clients), " +
		"so its disk is not yours, and ZEN_FILE_ROOTS is not set"
	ownFile  = "is one of the files zen reads its own configuration or secrets from"
	outside  = "is outside the directories zen may read (your home directory, the default:"
	badWD    = "working_directory_absolute_path: access denied:"
	keyStore = "is in .ssh, which holds keys and credentials"
)

var fileAttacks = []fileAttack{
	refused("ssh key via relevant_files", local, "codereview", review("relevant_files", "HOME/.ssh/id_rsa"),
		"/.ssh/id_rsa "+keyStore),
	refused("ssh key by ~ via absolute_file_paths", local, "chat", chatWith("absolute_file_paths", "~/.ssh/id_rsa"),
		keyStore),
	refused("ssh key named in files_checked", local, "codereview", review("files_checked", "~/.ssh/id_rsa"), keyStore),
	refused("aws credentials by traversal", local, "chat",
		chatWith("absolute_file_paths", "HOME/proj/../.aws/credentials"), "is in .aws, which holds keys and credentials"),
	refused("the server's own .env", local, "chat", chatWith("absolute_file_paths", "HOME/srv/.env"), ownFile),
	refused("a project's .env.production", local, "chat", chatWith("absolute_file_paths", "HOME/proj/.env.production"),
		"is a .env file, which holds secrets"),
	refused("zen's model catalogue", local, "chat", chatWith("absolute_file_paths", "HOME/srv/custom.json"), ownFile),
	refused("the tokens file inside a configured root", rooted, "chat",
		chatWith("absolute_file_paths", "HOME/shared/tokens.txt"), ownFile),
	refused("/run", local, "chat", chatWith("absolute_file_paths", "/run/secrets/kubernetes.io/serviceaccount/token"),
		"is a system directory"),
	refused("/proc/self/environ", local, "chat", chatWith("absolute_file_paths", "/proc/self/environ"),
		"/proc/self/environ is a system directory"),
	refused("a temporary file outside the roots", local, "chat", chatWith("absolute_file_paths", "OUTSIDE/secret.txt"),
		outside, "add the directory to ZEN_FILE_ROOTS"),
	refused("an image that links to a private key", local, "chat", chatWith("images", "HOME/proj/shot.png"),
		"/.ssh/id_rsa) "+keyStore),
	// A link out of the roots is refused alike whatever lies past it, so
	// that a client cannot probe what exists outside them.
	refused("a link to a file outside the roots", local, "chat", chatWith("absolute_file_paths", "HOME/probe/kept.md"),
		outside),
	refused("a link to a missing file outside the roots", local, "chat",
		chatWith("absolute_file_paths", "HOME/probe/gone.md"), outside),
	refused("a missing file under a link out of the roots", local, "chat",
		chatWith("absolute_file_paths", "HOME/probe/up/outside/nosuch.go"), outside),
	refused("a missing directory under a link out of the roots", local, "chat",
		chatWith("absolute_file_paths", "HOME/probe/up/nosuch/x.go"), outside),
	refused("a link in the project to aws credentials", local, "chat",
		chatWith("absolute_file_paths", "HOME/proj/notes.md"), "notes.md (which is ", "/.aws/credentials) is in .aws"),
	refused("a prompt.txt that links to .netrc", local, "chat", chatWith("absolute_file_paths", "HOME/proj/prompt.txt"),
		"is .netrc, a credentials file"),
	answered("a directory expansion holding .env files and links to secrets", local,
		chatWith("absolute_file_paths", "HOME/proj"), sawSource("HONEST-CODE")),
	answered("a directory expansion holding the tokens file", rooted,
		chatWith("absolute_file_paths", "HOME/shared"), sawSource("SHARED-CODE")),
	refused("a working directory outside the roots", local, "chat", codeInto("OUTSIDE"), badWD, "is outside"),
	refused("a working directory in a credential store", local, "chat", codeInto("HOME/.ssh"), badWD, "is in .ssh"),
	refused("a working directory in /var/tmp", local, "chat", codeInto("/var/tmp"), badWD,
		"/var/tmp is a system directory"),
	answered("a link planted at zen_generated.code", local, codeInto("HOME/trap"), nil,
		"zen_generated.code is a symbolic link; zen never writes through a link", generatedBody),
	refused("a shared server refuses project files", shared, "chat", chatWith("absolute_file_paths", "HOME/proj/main.go"),
		sharedRefusal, "ask the operator to set ZEN_FILE_ROOTS"),
	refused("a shared server refuses images", shared, "chat", chatWith("images", "HOME/proj/shot.png"), sharedRefusal),
	refused("a shared server refuses relevant_files", shared, "codereview", review("relevant_files", "HOME/proj/main.go"),
		sharedRefusal),
	refused("a shared server refuses the tokens file", shared, "chat",
		chatWith("absolute_file_paths", "HOME/shared/tokens.txt"), sharedRefusal),
	answered("a shared server writes nothing and returns the code", shared, codeInto("HOME/shared-work"), nil,
		"this zen is a shared server (ZEN_AUTH_TOKENS_FILE names its clients) and writes nothing to its disk",
		generatedBody),
	answered("a shared server with roots writes nothing either", rooted, codeInto("HOME/shared"),
		func(t *testing.T, w *fileWorld) {
			if _, err := os.Lstat(filepath.Join(w.shared, "zen_generated.code")); err == nil {
				t.Error("a shared server wrote zen_generated.code")
			}
		}, "writes nothing to its disk", generatedBody),
}

// TestSecurityFiles is issue 11's items 3 and 4 as an attacker tries them:
// each case names a file zen must not read or a place it must not write,
// and checks the refusal, that no secret reached the model or the reply,
// and that every victim is unchanged.
func TestSecurityFiles(t *testing.T) {
	w := newFileWorld(t)
	for _, a := range fileAttacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			res, _ := callTool(t, a.zen(w), a.tool, a.args(w))
			reply := text(res)
			if res.IsError != a.fails {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, a.fails, reply)
			}
			for _, want := range a.want {
				if !strings.Contains(reply, want) {
					t.Errorf("the reply lacks %q:\n%s", want, reply)
				}
			}
			if a.then != nil {
				a.then(t, w)
			}
			w.checkNothingLeaked(t, reply)
		})
	}
	// The other side: one person's zen still reads a project under the
	// home and writes zen_generated.code in its working directory.
	t.Run("honest local use", func(t *testing.T) {
		t.Parallel()
		work := filepath.Join(w.home, "work")
		res, _ := callTool(t, w.local, "chat", map[string]any{"prompt": writeCode, "model": "coder",
			"working_directory_absolute_path": work, "absolute_file_paths": []any{filepath.Join(w.proj, "main.go")}})
		if res.IsError {
			t.Fatal(text(res))
		}
		saved, err := os.ReadFile(filepath.Join(work, "zen_generated.code"))
		if diff := cmp.Diff(generatedBody+"\n", string(saved)); err != nil || diff != "" {
			t.Errorf("zen_generated.code (%v) (-want +got):\n%s", err, diff)
		}
		w.checkNothingLeaked(t, text(res))
	})
}
