package redisstore

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The same bytes are decoded once; other bytes for the thread (a thread
// written anew) are decoded again.
func TestAMetaIsDecodedAgainOnlyWhenItsBytesChange(t *testing.T) {
	t.Parallel()
	c := newMetaCache(maxMetaBytes)
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

// The cache keeps at most its bound, and never one thread's meta over a
// quarter of it.
func TestTheMetasKeptStayWithinTheirBound(t *testing.T) {
	t.Parallel()
	const bound = 64 << 10
	c := newMetaCache(bound)
	for i := range 1000 {
		id := fmt.Sprint("t", i)
		raw := fmt.Sprintf(`{"thread_id":%q,"initial_context":{"prompt":%q}}`, id, strings.Repeat("x", i%500))
		if _, err := c.decode(id, raw); err != nil {
			t.Fatal(err)
		}
		if c.bytes > bound {
			t.Fatalf("after %d metas the cache holds %d bytes, over its bound of %d", i+1, c.bytes, bound)
		}
	}
	huge := fmt.Sprintf(`{"thread_id":"h","initial_context":{"prompt":%q}}`, strings.Repeat("x", bound/4))
	if _, err := c.decode("h", huge); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.byID["h"]; ok {
		t.Error("a meta over a quarter of the bound was kept")
	}
	var sum int
	for _, kept := range c.byID {
		sum += len(kept.raw) + metaOverhead
	}
	if sum != c.bytes {
		t.Errorf("the cache counts %d bytes, holds %d", c.bytes, sum)
	}
}
