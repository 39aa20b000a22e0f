package envelope

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMembersAreReadByTheirExactNames: as the SDK reads them; a member
// named in other letters is another member.
func TestMembersAreReadByTheirExactNames(t *testing.T) {
	t.Parallel()
	type kind struct{ Request, Response bool }
	got := map[string]kind{}
	for name, body := range map[string]string{
		"a call with METHOD beside": `{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"ping"}`,
		"a notification with an ID": `{"jsonrpc":"2.0","method":"notifications/initialized","ID":5}`,
		"a response with a Method":  `{"jsonrpc":"2.0","id":3,"result":{},"Method":"tools/call"}`,
		"a null id":                 `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		"a method that is a number": `{"jsonrpc":"2.0","id":4,"method":7}`,
	} {
		m, ok := Read([]byte(body))
		if !ok {
			t.Fatalf("%s: not read", name)
		}
		got[name] = kind{m.IsRequest(), m.IsResponse()}
	}
	want := map[string]kind{
		"a call with METHOD beside": {Request: true}, "a notification with an ID": {},
		"a response with a Method": {Response: true}, "a null id": {}, "a method that is a number": {Response: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	m, _ := Read([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"RequestId":1}}`))
	if string(m.RequestID) != "9" {
		t.Errorf("the cancelled request = %s, want 9", m.RequestID)
	}
	if _, ok := Read([]byte(`[{"id":1}]`)); ok {
		t.Error("a batch was read as one message")
	}
}
