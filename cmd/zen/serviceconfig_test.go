package main

import (
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// TestServiceConfigNamesRealMethods: every call the clients' service config
// retries or bounds (serve.ConfiguredMethods) is a method of zen's protos.
// gRPC ignores a name that matches nothing, so an RPC renamed in its proto
// would otherwise lose its retries or deadline without a word.
func TestServiceConfigNamesRealMethods(t *testing.T) {
	t.Parallel()
	names := serve.ConfiguredMethods()
	if len(names) == 0 {
		t.Fatal("the service config names no method")
	}
	for _, name := range names {
		service, method, _ := strings.Cut(name, "/")
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
		if err != nil {
			t.Errorf("%s: no service %s in zen's protos: %v", name, service, err)
			continue
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			t.Errorf("%s: %s is a %T, not a service", name, service, d)
			continue
		}
		if sd.Methods().ByName(protoreflect.Name(method)) == nil {
			t.Errorf("%s: %s has no method %s", name, service, method)
		}
	}
}
