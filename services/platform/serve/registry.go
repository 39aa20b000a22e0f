package serve

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// registry holds a GRPC's services for Local, and drains Local's calls
// when the server stops, as GracefulStop drains the port's.
type registry struct {
	mu       sync.RWMutex
	services map[string]bool     // "zen.memory.v1.MemoryService"
	methods  map[string]*handler // "/zen.memory.v1.MemoryService/GetThread"
	closed   bool                // no new calls: the server is stopping
	calls    sync.WaitGroup      // calls in flight

	stopped context.Context // ends every handler's context: a hard stop
	stop    context.CancelFunc
}

// handler is one method of a registered service.
type handler struct {
	impl   any
	unary  grpc.MethodHandler // for a unary method
	stream *grpc.StreamDesc   // for a streaming one
	fresh  bool               // a unary method whose replies are fresh (FreshReplies)
}

// FreshReplies is implemented by a service that tells Local which of its
// unary methods (by name: "PrepareCall") build every reply anew, keep no
// part of it once it is returned, and share nothing mutable in it with
// anything else. Local hands such a reply to its caller itself instead of
// a copy: a reply that the handler's side would never touch again needs
// none. A method whose handler may return a message it keeps (a cache, a
// shared default) must not be named. Registering a service that names
// what is not one of its unary methods panics: the mistake would only
// lose the saving, unseen.
type FreshReplies interface {
	FreshReplies() []string
}

// freshReplies are the methods impl names fresh, checked against desc.
func freshReplies(desc *grpc.ServiceDesc, impl any) []string {
	f, ok := impl.(FreshReplies)
	if !ok {
		return nil
	}
	names := f.FreshReplies()
	for _, name := range names {
		if !slices.ContainsFunc(desc.Methods, func(m grpc.MethodDesc) bool { return m.MethodName == name }) {
			panic(fmt.Sprintf("serve: %s names %q fresh, which is not one of its unary methods",
				desc.ServiceName, name))
		}
	}
	return names
}

func newRegistry() *registry {
	r := &registry{services: map[string]bool{}, methods: map[string]*handler{}}
	r.stopped, r.stop = context.WithCancel(context.Background())
	return r
}

// register adds desc's methods, served by impl; fresh are those of its
// unary methods whose replies are fresh (freshReplies).
func (r *registry) register(desc *grpc.ServiceDesc, impl any, fresh []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.services[desc.ServiceName] = true
	for _, m := range desc.Methods {
		r.methods["/"+desc.ServiceName+"/"+m.MethodName] = &handler{impl: impl, unary: m.Handler,
			fresh: slices.Contains(fresh, m.MethodName)}
	}
	for i := range desc.Streams {
		s := &desc.Streams[i]
		r.methods["/"+desc.ServiceName+"/"+s.StreamName] = &handler{impl: impl, stream: s}
	}
}

// enter admits a call to method, refused as gRPC's server refuses it: an
// unknown method is Unimplemented, and a stopping server Unavailable.
// release must be called once the handler has returned.
func (r *registry) enter(method string) (h *handler, release func(), err error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h = r.methods[method]
	if h == nil {
		service, name, ok := splitMethod(method)
		switch {
		case !ok:
			return nil, nil, grpcstatus.Errorf(codes.Unimplemented, "malformed method name: %q", method)
		case r.services[service]:
			return nil, nil, grpcstatus.Errorf(codes.Unimplemented, "unknown method %v for service %v", name, service)
		default:
			return nil, nil, grpcstatus.Errorf(codes.Unimplemented, "unknown service %v", service)
		}
	}
	if r.closed {
		return nil, nil, errStopping
	}
	// Under the read lock, so none is added after close: wait may follow.
	r.calls.Add(1)
	return h, r.calls.Done, nil
}

var errStopping = grpcstatus.Error(codes.Unavailable, "the server is shutting down")

// close refuses new calls.
func (r *registry) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
}

// wait returns once the calls in flight have ended; after close, no more
// can start.
func (r *registry) wait() { r.calls.Wait() }
