package fastcall

import (
	"fmt"
	"strings"
	"testing"
)

// TestPlainShape: what reads the same to both decoders is plain; what
// nests too deep, repeats a member, escapes one or has too many is not.
func TestPlainShape(t *testing.T) {
	t.Parallel()
	metaOf := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
			strings.TrimSuffix(b.String(), ",") + `},"name":"chat"}}`
	}
	nested := func(depth int) string {
		return `{"params":{"arguments":` + strings.Repeat("[", depth-2) + strings.Repeat("]", depth-2) + `}}`
	}
	cases := []struct {
		name  string
		body  string
		plain bool
	}{
		{"a call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"a":[1,{"b":"}"}]}}}`,
			true},
		{"1000 deep", nested(1000), true},
		{"1001 deep", nested(1001), false},
		{"a member twice", `{"id":1,"id":2}`, false},
		{"a param twice", `{"params":{"name":"a","name":"b"}}`, false},
		{"a meta member twice", `{"params":{"_meta":{"a":1,"a":2}}}`, false},
		{"arguments' members twice", `{"params":{"arguments":{"a":1,"a":2}}}`, true},
		{"an escaped member", `{"params":{"n\u0061me":"chat"}}`, false},
		{"escapes in values", `{"params":{"name":"c\"h\\a\u0074"}}`, true},
		{"32 meta members", metaOf(32), true},
		{"33 meta members", metaOf(33), false},
	}
	for _, c := range cases {
		if _, got := plainShape([]byte(c.body)); got != c.plain {
			t.Errorf("%s: plain %v, want %v", c.name, got, c.plain)
		}
	}
}

// BenchmarkPlainShapeManyMembers: a body of very many _meta members costs
// microseconds, not its members squared (400,000 once took minutes).
func BenchmarkPlainShapeManyMembers(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"params":{"_meta":{`)
	for i := range 400_000 {
		fmt.Fprintf(&sb, `"%d":0,`, i)
	}
	sb.WriteString(`"x":0}}}`)
	body := []byte(sb.String())
	for b.Loop() {
		plainShape(body)
	}
}
