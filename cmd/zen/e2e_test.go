package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// stack is one way of running zen, as a client sees it.
type stack struct {
	session *mcp.ClientSession
	gateway string // base URL of the HTTP gateway; "" when there is none
}

// toolOrder is the reference's tools/list order.
var toolOrder = []string{"chat", "clink", "thinkdeep", "planner", "consensus", "codereview", "precommit", "debug", "secaudit",
	"docgen", "analyze", "refactor", "tracer", "testgen", "challenge", "apilookup", "listmodels", "version"}

func fakeEnv(fake *fakemodel.Server) map[string]string {
	return map[string]string{"CUSTOM_API_URL": fake.URL()}
}

// serveStack runs `zen serve` on free loopback ports.
func serveStack(t *testing.T, env map[string]string) stack {
	p := startZen(t, env, []string{"mcp", "gateway", "grpc"}, "serve", "--mcp-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0")
	return stack{session: connectHTTP(t, "http://"+p.addr("mcp")+"/mcp"), gateway: "http://" + p.addr("gateway")}
}

// stdioStack runs `zen stdio` as the client's subprocess.
func stdioStack(t *testing.T, env map[string]string) stack {
	cmd := exec.Command(zenBin, "stdio")
	cmd.Env = baseEnv(t, env)
	cmd.Dir = t.TempDir()
	return stdioStackFrom(t, cmd)
}

// stdioStackFrom connects to zen stdio started as cmd.
func stdioStackFrom(t *testing.T, cmd *exec.Cmd) stack {
	return stack{session: connect(t, &mcp.CommandTransport{Command: cmd})}
}

// splitStack runs the five roles as separate processes talking gRPC.
func splitStack(t *testing.T, env map[string]string) stack {
	with := func(extra map[string]string) map[string]string { return mergeEnv(env, extra) }
	grpcOnly := []string{"grpc"}
	mem := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "memory")
	rt := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "router")
	ex := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0", "ZEN_ROUTER_ADDR": rt.addr("grpc")}), grpcOnly, "executor")
	addrs := map[string]string{"ZEN_MEMORY_ADDR": mem.addr("grpc"), "ZEN_ROUTER_ADDR": rt.addr("grpc"), "ZEN_EXECUTOR_ADDR": ex.addr("grpc")}
	edge := startZen(t, with(addrs), []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
	gw := startZen(t, with(addrs), []string{"gateway"}, "gateway", "--http-addr", "127.0.0.1:0")
	return stack{session: connectHTTP(t, "http://"+edge.addr("mcp")+"/mcp"), gateway: "http://" + gw.addr("gateway")}
}

var stacks = []struct {
	name  string
	start func(*testing.T, map[string]string) stack
}{
	{"serve", serveStack},
	{"stdio", stdioStack},
	{"split", splitStack},
}

func TestChatConversation(t *testing.T) {
	for _, s := range stacks {
		t.Run(s.name, func(t *testing.T) {
			fake := fakemodel.New(t)
			replies := []string{"first answer from the model", "second answer from the model"}
			fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
				n := len(fake.Requests()) - 1
				return fakemodel.Reply{Content: replies[min(n, 1)]}
			})
			st := s.start(t, fakeEnv(fake))
			wd := t.TempDir()

			res, got := callTool(t, st.session, "chat", map[string]any{
				"prompt": "first question", "working_directory_absolute_path": wd, "model": "local-llama",
			})
			if res.IsError || got == nil {
				t.Fatalf("first call failed: %s", text(res))
			}
			offer, _ := got["continuation_offer"].(map[string]any)
			id, _ := offer["continuation_id"].(string)
			if got["status"] != "continuation_available" || uuid.Validate(id) != nil || offer["remaining_turns"] != 48.0 {
				t.Fatalf("first call: status %v, offer %v", got["status"], offer)
			}
			content, _ := got["content"].(string)
			meta, _ := got["metadata"].(map[string]any)
			traceID, _ := meta["trace_id"].(string)
			if !strings.HasPrefix(content, "first answer from the model") || !strings.Contains(content, "AGENT'S TURN") ||
				meta["model_used"] != "llama3.2" || meta["requested_model"] != "local-llama" ||
				meta["provider_used"] != "custom" || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(traceID) {
				t.Errorf("first call: content %q, metadata %v", content, meta)
			}
			if res.StructuredContent == nil {
				t.Error("no structuredContent beside the JSON text")
			}

			// The continuation names no model: it inherits llama3.2.
			res, got = callTool(t, st.session, "chat", map[string]any{
				"prompt": "second question", "working_directory_absolute_path": wd, "continuation_id": id,
			})
			if res.IsError || got == nil {
				t.Fatalf("continuation failed: %s", text(res))
			}
			offer, _ = got["continuation_offer"].(map[string]any)
			if offer["continuation_id"] != id || offer["remaining_turns"] != 46.0 {
				t.Errorf("continuation offer = %v, want the same id and 46 turns left", offer)
			}
			reqs := fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d upstream requests, want 2", len(reqs))
			}
			second := reqs[1].AllText()
			for _, want := range []string{"first question", "first answer from the model", "=== NEW USER INPUT ===\nsecond question"} {
				if strings.Count(second, want) != 1 {
					t.Errorf("second upstream request has %q %d times, want once:\n%s", want, strings.Count(second, want), second)
				}
			}
			if reqs[1].Model != "llama3.2" {
				t.Errorf("continuation used model %q, want llama3.2 inherited", reqs[1].Model)
			}

			if st.gateway != "" {
				code, thread := getJSON(t, st.gateway+"/v1/threads/"+id)
				turns, _ := thread["thread"].(map[string]any)["turns"].([]any)
				if code != 200 || len(turns) != 4 {
					t.Fatalf("GET /v1/threads/%s = %d with %d turns, want 200 with 4: %v", id, code, len(turns), thread)
				}
				for i, want := range []string{"ROLE_USER", "ROLE_ASSISTANT", "ROLE_USER", "ROLE_ASSISTANT"} {
					if turn := turns[i].(map[string]any); turn["role"] != want {
						t.Errorf("turn %d role %v, want %s", i, turn["role"], want)
					}
				}
				if turns[1].(map[string]any)["model_name"] != "llama3.2" || turns[2].(map[string]any)["content"] != "second question" {
					t.Errorf("turns = %v", turns)
				}
			}
		})
	}
}

func TestBadInputGetsClearErrorsAndNoModelCall(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	wd := t.TempDir()
	link := filepath.Join(wd, "innocent.txt")
	if err := os.Symlink("/etc/shadow", link); err != nil {
		t.Fatal(err)
	}
	unknown := uuid.NewString()
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing prompt", map[string]any{"working_directory_absolute_path": wd, "model": "llama3.2"}, "prompt"},
		{"relative working directory", map[string]any{"prompt": "p", "working_directory_absolute_path": "src", "model": "llama3.2"}, "FULL absolute path"},
		{"missing working directory", map[string]any{"prompt": "p", "working_directory_absolute_path": wd + "/nope", "model": "llama3.2"}, "not an existing directory"},
		{"relative file", map[string]any{"prompt": "p", "working_directory_absolute_path": wd, "model": "llama3.2", "absolute_file_paths": []any{"a.go"}}, `"a.go"`},
		{"unknown model", map[string]any{"prompt": "p", "working_directory_absolute_path": wd, "model": "gpt-99"}, "Model 'gpt-99' is not available with current API keys. Available models: llama3.2, local-llama, ollama-llama. Suggested model for chat: 'llama3.2' (category: fast_response)"},
		{"unknown thread", map[string]any{"prompt": "p", "working_directory_absolute_path": wd, "continuation_id": unknown}, "Conversation thread '" + unknown + "' was not found or has expired"},
		{"malformed thread id", map[string]any{"prompt": "p", "working_directory_absolute_path": wd, "continuation_id": "not-a-uuid"}, "Conversation thread 'not-a-uuid' was not found or has expired"},
		{"unknown argument", map[string]any{"prompt": "p", "working_directory_absolute_path": wd, "model": "llama3.2", "colour": "red"}, "colour"},
		{"system file", map[string]any{"prompt": "p", "working_directory_absolute_path": wd, "model": "llama3.2", "absolute_file_paths": []any{"/etc/passwd"}}, "access denied: /etc/passwd is a system directory"},
		{"link out of the project", map[string]any{"prompt": "p", "working_directory_absolute_path": wd, "model": "llama3.2", "absolute_file_paths": []any{link}}, "(which is /etc/shadow)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, got := callTool(t, st.session, "chat", tt.args)
			msg := text(res)
			if got != nil {
				msg, _ = got["content"].(string)
			}
			if !res.IsError || !strings.Contains(msg, tt.want) {
				t.Errorf("IsError %v, message %q; want an error containing %q", res.IsError, msg, tt.want)
			}
		})
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("bad input reached the model %d times", n)
	}
}

func TestUnknownToolIsAProtocolError(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	_, err := st.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "nosuchtool", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "nosuchtool") {
		t.Errorf("err = %v, want a JSON-RPC error naming the tool", err)
	}
}

func TestProviderFailuresAreToolErrorsWithoutAThread(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply fakemodel.Reply
		want  string
	}{
		{"500", fakemodel.Reply{Status: 500}, "Error in chat: Custom API error for model llama3.2: HTTP 500"},
		{"garbage", fakemodel.Reply{Raw: "this is not json"}, "Error in chat: Custom API error for model llama3.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tc.reply })
			st := serveStack(t, fakeEnv(fake))
			res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "p", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"})
			if !res.IsError || got == nil || got["status"] != "error" || !strings.Contains(got["content"].(string), tc.want) {
				t.Fatalf("IsError %v, payload %v; want status error containing %q", res.IsError, got, tc.want)
			}
			if _, offered := got["continuation_offer"]; offered {
				t.Error("a failed call offered a continuation")
			}
		})
	}
}

func TestUtilityTools(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	tools, err := st.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Name == "chat" && (tool.Annotations == nil || tool.Annotations.ReadOnlyHint) {
			t.Error("chat must not be marked read-only: it can write zen_generated.code")
		}
	}
	if strings.Join(names, ",") != strings.Join(toolOrder, ",") {
		t.Errorf("tools = %v", names)
	}
	for _, tc := range []struct{ tool, want string }{{"listmodels", "llama3.2"}, {"version", "zen MCP server"}} {
		res, got := callTool(t, st.session, tc.tool, map[string]any{})
		if res.IsError || got["status"] != "success" || !strings.Contains(got["content"].(string), tc.want) {
			t.Errorf("%s: %v", tc.tool, got)
		}
		if _, offered := got["continuation_offer"]; offered {
			t.Errorf("%s offered a continuation", tc.tool)
		}
	}
}

func TestGatewayInspection(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	for _, path := range []string{"/healthz", "/readyz", "/v1/models", "/v1/tools", "/openapi.json", "/v1/models/local-llama"} {
		if code, body := getJSON(t, st.gateway+path); code != 200 || body == nil {
			t.Errorf("GET %s = %d %v", path, code, body)
		}
	}
	code, body := getJSON(t, st.gateway+"/v1/threads/"+uuid.NewString())
	if code != 404 || !strings.Contains(body["message"].(string), "not found") {
		t.Errorf("unknown thread: %d %v", code, body)
	}
	_, models := getJSON(t, st.gateway+"/v1/models")
	first := models["models"].([]any)[0].(map[string]any)
	if _, ok := first["context_window"].(float64); !ok || first["supports_images"] == nil {
		t.Errorf("models use proto field names with numbers: %v", first)
	}
}

// TestAnUnknownModelIsTheSameRefusalForEveryTool: the reference's server
// refuses an unknown model before any tool runs, in one shape whatever the
// tool ({"status":"error", ..., "metadata": {tool_name, requested_model}});
// a workflow tool's answered debug_failed.
func TestAnUnknownModelIsTheSameRefusalForEveryTool(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	for tool, args := range map[string]map[string]any{
		"chat": {"prompt": "p", "working_directory_absolute_path": t.TempDir(), "model": "gpt-99"},
		"debug": {"step": "look", "step_number": 1, "total_steps": 1, "next_step_required": false,
			"findings": "none", "model": "gpt-99"},
	} {
		res, got := callTool(t, st.session, tool, args)
		meta, _ := got["metadata"].(map[string]any)
		content, _ := got["content"].(string)
		if !res.IsError || got["status"] != "error" || meta["requested_model"] != "gpt-99" ||
			meta["tool_name"] != tool || !strings.HasPrefix(content, "Model 'gpt-99' is not available") {
			t.Errorf("%s: IsError %v, %v; want the reference's refusal of an unknown model", tool, res.IsError, got)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("an unknown model reached a model %d times", n)
	}
}

// stampedDate is the commit date the tests' zen is built with, as make
// build stamps the real one.
const stampedDate = "2026-01-02"

// TestVersionSaysWhenItsCodeWasLastUpdated: the reference's version tool
// reports last_updated beside server_version; zen's did not. It is the
// date of the commit the binary was built from, as the build stamped it.
func TestVersionSaysWhenItsCodeWasLastUpdated(t *testing.T) {
	t.Parallel()
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	res, got := callTool(t, st.session, "version", map[string]any{})
	meta, _ := got["metadata"].(map[string]any)
	if res.IsError || meta["last_updated"] != stampedDate {
		t.Errorf("version's metadata: %v; want last_updated %s, the date the build stamped", meta, stampedDate)
	}
}
