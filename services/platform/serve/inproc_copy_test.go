package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// The contract of a message crossing Local, as it crosses a network: the
// receiver holds a message of its own, which neither side's later changes
// reach; the size limit; and the sizes the stats handlers hear.

// body is a payload of text, for messages a test changes in place.
func body(s string) *testgrpc.Payload { return &testgrpc.Payload{Body: []byte(s)} }

// isolation is what each side held at the end of a call in which both
// changed the messages they had.
type isolation struct {
	ClientRequest, ClientReply   proto.Message // the caller's, after its own changes
	HandlerRequest, HandlerReply proto.Message // the handler's, after its own changes
}

func TestLocalUnaryMessagesAreTheReceiversOwn(t *testing.T) {
	t.Parallel()
	var handlerReq *testgrpc.SimpleRequest
	var handlerReply *testgrpc.SimpleResponse
	srv := &fakeTest{unary: func(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		req.Payload.Body[0] = 'h' // nested fields of the request it got
		req.ResponseStatus.Message = "handler's"
		handlerReq = req
		handlerReply = &testgrpc.SimpleResponse{Payload: body("reply"), Username: "alice"}
		return handlerReply, nil
	}}
	_, conns := bothWays(t, testToken, testToken, srv)
	got := map[string]isolation{}
	for name, conn := range conns {
		req := &testgrpc.SimpleRequest{Payload: body("request"), ResponseStatus: &testgrpc.EchoStatus{Message: "mine"}}
		reply := &testgrpc.SimpleResponse{}
		if err := conn.Invoke(t.Context(), "/grpc.testing.TestService/UnaryCall", req, reply); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Each side changes what it holds after the call.
		req.Payload.Body[1] = 'c'
		req.ResponseStatus.Message = "caller's"
		reply.Payload.Body[0] = 'c'
		handlerReply.Payload.Body[1] = 'h'
		handlerReply.Username = "changed by the handler"
		got[name] = isolation{ClientRequest: req, ClientReply: reply, HandlerRequest: handlerReq,
			HandlerReply: handlerReply}
	}
	same(t, got)
	want := isolation{
		ClientRequest: &testgrpc.SimpleRequest{Payload: body("rcquest"),
			ResponseStatus: &testgrpc.EchoStatus{Message: "caller's"}},
		ClientReply: &testgrpc.SimpleResponse{Payload: body("ceply"), Username: "alice"},
		HandlerRequest: &testgrpc.SimpleRequest{Payload: body("hequest"),
			ResponseStatus: &testgrpc.EchoStatus{Message: "handler's"}},
		HandlerReply: &testgrpc.SimpleResponse{Payload: body("rhply"), Username: "changed by the handler"},
	}
	if diff := cmp.Diff(want, got["local"], cmpProto); diff != "" {
		t.Errorf("local: one side saw the other's changes (-want +got):\n%s", diff)
	}
}

var cmpProto = cmp.Comparer(proto.Equal)

// lateService answers Call on a handler that reads its request only once
// released, and then tries to read it again.
type lateService struct {
	entered, release chan struct{}
	read             chan lateRead
}

// lateRead is what the late handler's two reads gave it.
type lateRead struct {
	First, Second *testgrpc.SimpleRequest // nil if the read failed
	Errors        [2]string
}

var lateDesc = grpc.ServiceDesc{
	ServiceName: "zen.serve.test.Late",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Call", Handler: func(srv any, _ context.Context, dec func(any) error,
		_ grpc.UnaryServerInterceptor) (any, error) {
		l := srv.(*lateService)
		l.entered <- struct{}{}
		<-l.release
		var r lateRead
		for i, into := range []**testgrpc.SimpleRequest{&r.First, &r.Second} {
			m := &testgrpc.SimpleRequest{}
			if err := dec(m); err != nil {
				r.Errors[i] = err.Error()
				continue
			}
			*into = m
			m.Payload.Body[0] = 'h'
		}
		l.read <- r
		return &testgrpc.SimpleResponse{}, nil
	}}},
}

// A unary handler reads its request once, as from the network: a second
// read is the end of the stream. Once its caller has left, a read gives
// either the request as sent or the caller's status (over a network it
// depends on whether the reset overtook the message), never what the
// caller did to its request after leaving.
func TestLocalHandlerReadsItsRequestOnce(t *testing.T) {
	t.Parallel()
	late := &lateService{entered: make(chan struct{}), release: make(chan struct{}), read: make(chan lateRead, 1)}
	_, conns := serveBothWays(t, testToken, testToken, nil, func(g *GRPC) { g.RegisterService(&lateDesc, late) })
	for _, leaves := range []bool{false, true} {
		got := map[string]lateRead{}
		for name, conn := range conns {
			req := &testgrpc.SimpleRequest{Payload: body("request")}
			ctx, cancel := context.WithCancel(t.Context())
			called := make(chan error, 1)
			go func() {
				called <- conn.Invoke(ctx, "/zen.serve.test.Late/Call", req, &testgrpc.SimpleResponse{})
			}()
			<-late.entered
			if leaves {
				cancel()
				if err := <-called; grpcstatus.Code(err) != codes.Canceled {
					t.Errorf("%s: the call = %v, want Canceled", name, err)
				}
				req.Payload.Body[0] = 'c' // the caller, gone, reuses its request
			}
			late.release <- struct{}{}
			got[name] = <-late.read
			if !leaves {
				if err := <-called; err != nil {
					t.Errorf("%s: the call = %v", name, err)
				}
			}
			cancel()
		}
		if !leaves {
			same(t, got)
			want := lateRead{First: &testgrpc.SimpleRequest{Payload: body("hequest")}, Errors: [2]string{"", "EOF"}}
			if diff := cmp.Diff(want, got["local"], cmpProto); diff != "" {
				t.Errorf("local: what the handler read (-want +got):\n%s", diff)
			}
			continue
		}
		canceled := "rpc error: code = Canceled desc = context canceled"
		for name, r := range got {
			for _, m := range []*testgrpc.SimpleRequest{r.First, r.Second} {
				if m != nil && string(m.GetPayload().GetBody()) != "hequest" {
					t.Errorf("%s: after its caller left, the handler read %v", name, m)
				}
			}
			if r.First == nil && r.Errors[0] != canceled {
				t.Errorf("%s: after its caller left, the handler's read failed with %q, want %q",
					name, r.Errors[0], canceled)
			}
		}
	}
}

// streamIsolation is what each side held at the end of a stream in which
// both changed the messages they had sent or received.
type streamIsolation struct {
	ClientSent, HandlerReceived []*testgrpc.StreamingOutputCallRequest
	HandlerSent, ClientReceived []*testgrpc.StreamingOutputCallResponse
}

// duplexEcho answers FullDuplexCall: it changes each message it receives
// and sends a reply it then changes too, before the caller has read it.
type duplexEcho struct {
	*fakeTest
	got chan streamIsolation
}

func (d duplexEcho) FullDuplexCall(s testgrpc.TestService_FullDuplexCallServer) error {
	var o streamIsolation
	defer func() { d.got <- o }()
	for {
		req, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		req.Payload.Body[0] = 'h'
		o.HandlerReceived = append(o.HandlerReceived, req)
		reply := &testgrpc.StreamingOutputCallResponse{Payload: body("reply")}
		if err := s.Send(reply); err != nil {
			return err
		}
		reply.Payload.Body[1] = 'h'
		o.HandlerSent = append(o.HandlerSent, reply)
	}
}

func TestLocalStreamMessagesAreTheReceiversOwn(t *testing.T) {
	t.Parallel()
	echo := duplexEcho{fakeTest: &fakeTest{}, got: make(chan streamIsolation, 1)}
	_, conns := bothWays(t, testToken, testToken, echo)
	got := map[string]streamIsolation{}
	for name, conn := range conns {
		stream, err := testgrpc.NewTestServiceClient(conn).FullDuplexCall(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var o streamIsolation
		// Both messages are sent before either reply is read, and the
		// caller changes each once it is sent: they wait in the stream.
		for range 2 {
			req := &testgrpc.StreamingOutputCallRequest{Payload: body("request")}
			if err := stream.Send(req); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			req.Payload.Body[1] = 'c'
			o.ClientSent = append(o.ClientSent, req)
		}
		if err := stream.CloseSend(); err != nil {
			t.Fatal(err)
		}
		for {
			reply, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			reply.Payload.Body[0] = 'c'
			o.ClientReceived = append(o.ClientReceived, reply)
		}
		h := <-echo.got
		o.HandlerReceived, o.HandlerSent = h.HandlerReceived, h.HandlerSent
		got[name] = o
	}
	same(t, got)
	req := func(s string) *testgrpc.StreamingOutputCallRequest {
		return &testgrpc.StreamingOutputCallRequest{Payload: body(s)}
	}
	reply := func(s string) *testgrpc.StreamingOutputCallResponse {
		return &testgrpc.StreamingOutputCallResponse{Payload: body(s)}
	}
	want := streamIsolation{
		ClientSent:      []*testgrpc.StreamingOutputCallRequest{req("rcquest"), req("rcquest")},
		HandlerReceived: []*testgrpc.StreamingOutputCallRequest{req("hequest"), req("hequest")},
		HandlerSent:     []*testgrpc.StreamingOutputCallResponse{reply("rhply"), reply("rhply")},
		ClientReceived:  []*testgrpc.StreamingOutputCallResponse{reply("ceply"), reply("ceply")},
	}
	if diff := cmp.Diff(want, got["local"], cmpProto); diff != "" {
		t.Errorf("local: one side saw the other's changes (-want +got):\n%s", diff)
	}
}

// What a receiver gets from Local is what unmarshalling the sender's
// encoding gives it, and what a sender is refused is what marshalling
// refuses, for messages of every shape: maps, oneofs, lists, unknown
// fields, proto2 required fields, nil messages, and a receiver of another
// type.
func TestLocalCopiesAreWhatTheWireGives(t *testing.T) {
	t.Parallel()
	withUnknown := &testgrpc.SimpleRequest{ResponseSize: 3}
	withUnknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7))
	value, err := structpb.NewStruct(map[string]any{"usage": map[string]any{"tokens": 12}, "list": []any{"a", true, nil},
		"nothing": nil})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		sent proto.Message
		into proto.Message // the receiver's message, when not of sent's type
	}{
		{name: "maps, oneofs and lists", sent: value},
		{name: "unknown fields", sent: withUnknown},
		{name: "a nil message", sent: (*testgrpc.SimpleRequest)(nil)},
		{name: "an empty message", sent: &testgrpc.SimpleRequest{}},
		{name: "bytes and nested messages", sent: &testgrpc.SimpleRequest{Payload: body("x"),
			ResponseStatus: &testgrpc.EchoStatus{Code: 3, Message: "m"}}},
		{name: "a receiver of another type", sent: &testgrpc.SimpleRequest{Payload: body("x"), FillUsername: true},
			into: &testgrpc.Payload{}},
		{name: "proto2, its required fields set", sent: &descriptorpb.UninterpretedOption_NamePart{
			NamePart: proto.String("\xff"), IsExtension: proto.Bool(true)}},
		{name: "proto2, a required field unset",
			sent: &descriptorpb.UninterpretedOption_NamePart{NamePart: proto.String("a")}},
		{name: "invalid UTF-8 in a map key", sent: &structpb.Struct{Fields: map[string]*structpb.Value{"\xff": {}}}},
		{name: "invalid UTF-8 deep in a list", sent: &structpb.ListValue{Values: []*structpb.Value{
			structpb.NewStringValue("ok"), structpb.NewStringValue("\xc3")}}},
		{
			name: "a message that checks its own strings",
			sent: selfChecked{value, true},
			into: &structpb.Struct{},
		},
		{name: "a message that finds its own strings invalid", sent: selfChecked{&structpb.ListValue{
			Values: []*structpb.Value{structpb.NewStringValue("\xc3")}}, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			newInto := func() proto.Message {
				if tc.into != nil {
					return tc.into.ProtoReflect().New().Interface()
				}
				return tc.sent.ProtoReflect().New().Interface()
			}
			type outcome struct {
				Size     int
				Err      string
				Received proto.Message
			}
			// Over the wire, as gRPC's codec does it.
			var wire outcome
			if b, err := proto.Marshal(tc.sent); err != nil {
				wire.Err = fmt.Sprintf("grpc: error while marshaling: %v", err)
			} else {
				wire.Size, wire.Received = len(b), newInto()
				if err := proto.Unmarshal(b, wire.Received); err != nil {
					t.Fatal(err)
				}
			}
			for _, how := range []string{"copyInto", "moveInto"} {
				var got outcome
				m, size, err := sendable(tc.sent)
				if err != nil {
					got.Err = grpcstatus.Convert(err).Message()
				} else {
					got.Size, got.Received = size, newInto()
					if how == "moveInto" {
						err = moveInto(got.Received, proto.Clone(m))
					} else {
						err = copyInto(got.Received, m)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if diff := cmp.Diff(wire, got, protocmp.Transform()); diff != "" {
					t.Errorf("%s differs from the wire (-wire +%s):\n%s", how, how, diff)
				}
			}
		})
	}
}

// selfChecked is a message with a ValidUTF8 of its own, as zen's generated
// messages have (protoc-gen-zen-utf8), answering as it is told.
type selfChecked struct {
	proto.Message
	valid bool
}

func (s selfChecked) ValidUTF8() bool { return s.valid }

// A message that checks its own strings is taken at its word: its
// generated check is what stands between it and the receiver, which is
// why protoc-gen-zen-utf8's tests hold it to proto.Marshal's answer.
func TestSendableTrustsAMessagesOwnCheck(t *testing.T) {
	t.Parallel()
	invalid := &structpb.Struct{Fields: map[string]*structpb.Value{"\xff": {}}}
	_, size, err := sendable(selfChecked{invalid, true})
	if err != nil {
		t.Fatalf("sendable of a message whose own check passes: %v", err)
	}
	if want := proto.Size(invalid); size != want {
		t.Errorf("size = %d, want proto.Size's %d", size, want)
	}
	if _, _, err := sendable(invalid); err == nil {
		t.Errorf("sendable of the same message, unable to check itself, passed")
	}
}

// A message that is not a protobuf message is refused on either side,
// with gRPC's words.
func TestLocalRefusesWhatIsNotAMessage(t *testing.T) {
	t.Parallel()
	_, _, err := sendable("a string")
	want := grpcstatus.New(codes.Internal,
		"grpc: error while marshaling: failed to marshal, message is string, want proto.Message")
	if diff := cmp.Diff(want.Proto(), grpcstatus.Convert(err).Proto(), protocmp.Transform()); diff != "" {
		t.Errorf("sending a string (-want +got):\n%s", diff)
	}
	want = grpcstatus.New(codes.Internal, "grpc: failed to unmarshal, message is *int, want proto.Message")
	for name, into := range map[string]func(any, proto.Message) error{"copyInto": copyInto, "moveInto": moveInto} {
		err := into(new(int), &testgrpc.Empty{})
		if diff := cmp.Diff(want.Proto(), grpcstatus.Convert(err).Proto(), protocmp.Transform()); diff != "" {
			t.Errorf("%s into an int (-want +got):\n%s", name, diff)
		}
	}
}
