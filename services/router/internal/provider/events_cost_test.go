package provider

import (
	"strings"
	"testing"
)

// What a stream costs to read follows its size, not the order of its
// events: after one chunk with very many choices, a later chunk must not
// clear them all again. (A provider, or a proxy gone wrong, that sends one
// chunk of a few MiB of empty choices and then tiny chunks would otherwise
// keep a core busy for hours within one reply's byte limit.)
func TestAChunkWithManyChoicesIsNotKeptForTheNext(t *testing.T) {
	t.Parallel()
	var chunk streamChunk
	wide := `{"choices":[` + strings.Repeat("{},", 100_000) + `{"delta":{"content":"a"}}]}`
	if err := decodeChunk([]byte(wide), &chunk); err != nil {
		t.Fatal(err)
	}
	if len(chunk.Choices) != 100_001 || chunk.Choices[100_000].Delta.Content != "a" {
		t.Fatalf("the wide chunk decoded to %d choices", len(chunk.Choices))
	}
	if err := decodeChunk([]byte(`{"choices":[{"delta":{"content":"b"}}]}`), &chunk); err != nil {
		t.Fatal(err)
	}
	if cap(chunk.Choices) > reusedChoices || len(chunk.Choices) != 1 || chunk.Choices[0].Delta.Content != "b" {
		t.Errorf("after the wide chunk, the next has %d choices in an array of %d (want 1 in at most %d)",
			len(chunk.Choices), cap(chunk.Choices), reusedChoices)
	}
	// A small array is reused, and cleared: nothing of the last chunk stays.
	if err := decodeChunk([]byte(`{"choices":[{"finish_reason":"stop"}]}`), &chunk); err != nil {
		t.Fatal(err)
	}
	if chunk.Choices[0].Delta.Content != "" || chunk.Choices[0].FinishReason != "stop" {
		t.Errorf("a reused choice kept the last chunk's fields: %+v", chunk.Choices[0])
	}
}
