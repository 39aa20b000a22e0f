package redisstore

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// The same bytes are decoded once; other bytes for the thread (a thread
// written anew) are decoded again.
func TestAMetaIsDecodedAgainOnlyWhenItsBytesChange(t *testing.T) {
	t.Parallel()
	c := newMetaCache(memory.DefaultHeadBytes)
	first := `{"thread_id":"t","tool_name":"chat","initial_context":{"prompt":"first"}}`
	a, err := c.decode("t", first)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.decode("t", strings.Clone(first))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(a.InitialContext).Pointer() != reflect.ValueOf(again.InitialContext).Pointer() {
		t.Error("the same meta was decoded again")
	}
	replaced, err := c.decode("t", strings.Replace(first, "first", "second", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := replaced.InitialContext["prompt"]; got != "second" {
		t.Errorf("a thread written anew reads prompt %q, want %q", got, "second")
	}
	if _, err := c.decode("u", `{"thread_id":`); err == nil || !strings.Contains(err.Error(), "thread u") {
		t.Errorf("a meta that does not decode: %v, want an error naming the thread", err)
	}
}

// A meta is counted as decoded: JSON of empty objects, 450 KB of text,
// decodes to some 10 MB, more than one thread may take of the bound.
func TestAMetaIsCountedAsDecoded(t *testing.T) {
	t.Parallel()
	c := newMetaCache(memory.DefaultHeadBytes)
	raw := `{"thread_id":"t","initial_context":{"x":[{}` + strings.Repeat(",{}", 150_000) + `]}}`
	if _, err := c.decode("t", raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.heads.Get("t"); ok {
		t.Error("a meta of some 10 MB decoded was kept, counted as its text")
	}
}
