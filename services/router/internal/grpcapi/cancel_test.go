package grpcapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// answers records the status each Generate handler returned. With
// holdSecond, the handler's second message waits until its caller has gone
// away: a caller that leaves between two deltas, whatever the timing.
type answers struct {
	holdSecond bool
	mu         sync.Mutex
	codes      []codes.Code
	done       chan struct{} // closed at the first answer
}

func (a *answers) intercept(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if a.holdSecond {
		ss = &holdSecond{ServerStream: ss}
	}
	err := h(srv, ss)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.codes = append(a.codes, status.Code(err))
	if len(a.codes) == 1 {
		close(a.done)
	}
	return err
}

type holdSecond struct {
	grpc.ServerStream
	sent int
}

func (s *holdSecond) SendMsg(m any) error {
	if s.sent++; s.sent == 2 {
		<-s.Context().Done()
	}
	return s.ServerStream.SendMsg(m)
}

// routerWatched serves a router whose Custom provider is fake, logging to
// logs at debug level and recording what its handlers answered in a.
func routerWatched(t *testing.T, fake *fakemodel.Server, logs *bytes.Buffer, a *answers,
	opts ...grpc.ServerOption) routerv1.RouterServiceClient {
	t.Helper()
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a.done = make(chan struct{})
	reg := onlyProvider(t, "custom", "Custom API", fake)
	api := grpcapi.New(reg, fastPolicy, logger, telemetry.NewInstruments())
	api.SetDeltaEvery(0) // every chunk a delta: these tests go away between two
	return serveRouter(t, api, append(opts, grpc.StreamInterceptor(a.intercept))...)
}

// logLine is what a test reads of a log record.
type logLine struct{ Level, Msg string }

func logLines(t *testing.T, logs *bytes.Buffer) []logLine {
	t.Helper()
	var out []logLine
	for line := range strings.Lines(logs.String()) {
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, l)
	}
	return out
}

// TestCallerGoneMidStreamIsCancelled: a caller that goes away while the
// reply streams is a cancellation, not a failure of the router: the
// handler answers Canceled and the log says so at debug level, whether the
// provider was still answering (its request is then aborted) or had
// answered already (the delta that could not be sent says nothing more).
func TestCallerGoneMidStreamIsCancelled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		reply          fakemodel.Reply
		holdSecond     bool
		providerCalled bool // the fake sees its request aborted
	}{
		{"the provider still answering", fakemodel.Reply{Content: "the first words of a long answer", StallAfter: 2},
			false, true},
		{"the provider's reply already whole", fakemodel.Reply{Content: "a short answer"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
			var logs bytes.Buffer
			a := &answers{holdSecond: tt.holdSecond}
			client := routerWatched(t, fake, &logs, a)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stream, err := client.Generate(ctx, &routerv1.GenerateRequest{Model: "llama3.2",
				Messages: []*routerv1.Message{{Role: "user", Content: "tell me everything"}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stream.Recv(); err != nil {
				t.Fatalf("first delta: %v", err)
			}
			cancel()
			if tt.providerCalled {
				fake.WaitCancelled(t, 0)
			}
			<-a.done
			if diff := cmp.Diff([]codes.Code{codes.Canceled}, a.codes); diff != "" {
				t.Errorf("the router answered (-want +got):\n%s", diff)
			}
			want := []logLine{{Level: "DEBUG", Msg: "caller went away"}}
			if diff := cmp.Diff(want, logLines(t, &logs)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUndeliverableReplyAbortsTheProvider: a delta the router cannot pass
// on (here, past the gRPC message size limit) is the router's failure, not
// a cancellation, and it ends the provider's request at once instead of
// reading the rest of a reply nobody will get.
func TestUndeliverableReplyAbortsTheProvider(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: strings.Repeat("x", 200) + " and more", StallAfter: 1}
	})
	var logs bytes.Buffer
	a := &answers{}
	client := routerWatched(t, fake, &logs, a, grpc.MaxSendMsgSize(100))
	stream, err := client.Generate(context.Background(), &routerv1.GenerateRequest{Model: "llama3.2",
		Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err == nil {
		t.Error("the caller got a delta past its size limit")
	}
	fake.WaitCancelled(t, 0)
	<-a.done
	if diff := cmp.Diff([]codes.Code{codes.Internal}, a.codes); diff != "" {
		t.Errorf("the router answered (-want +got):\n%s", diff)
	}
	want := []logLine{{Level: "ERROR", Msg: "generate failed"}}
	if diff := cmp.Diff(want, logLines(t, &logs)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
