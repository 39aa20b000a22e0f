package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// zen reads a chat completion's event stream itself: go-openai's reader
// matches two regular expressions on every line, allocates every line and
// decodes every chunk into its full response type (docs/BENCHMARKS.md,
// Router, says what that cost). go-openai still builds and sends the
// request and reads a failed answer; the stream tap
// (nostream.go) hands the body of a streamed one to eventReader.
//
// eventReader reads exactly as go-openai v1.43's stream reader does, quirks
// and all, so that wrap reports every stream the same as before
// (events_test.go compares the two on the same bodies):
//
//   - Each line is trimmed of white space. "data:" and the ASCII white space
//     after it open a payload; "[DONE]" ends the stream, and so does the end
//     of the body. A last line with no newline is not read.
//   - Every other line is appended to one buffer kept for the whole stream,
//     and counts as an empty message: more than the client's limit between
//     two payloads fail the stream. At the end of the body the buffer is
//     tried as an OpenAI error ({"error": {...}}), which is how an error
//     sent as a plain JSON body with a 200 is seen.
//   - A payload that opens with {"error": is appended to the same buffer,
//     which is tried as an error at the next line. When it is not one (it
//     follows a comment, or its error is null) the read fails as an empty
//     payload does: "unexpected end of JSON input".
//
// Its only difference is in decoding: a chunk is decoded into streamChunk,
// which holds only what Compat.stream uses, so a field zen does not read is
// not checked for its type (go-openai refused "id": 5). An error decoding
// what zen reads is go-openai's own, word for word.

// streamChunk is the part of a chat completion chunk zen uses.
type streamChunk struct {
	Choices []streamChoice `json:"choices"`
	Usage   *streamUsage   `json:"usage"`
}

type streamChoice struct {
	Delta struct {
		Content string `json:"content"`
	} `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type streamUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// eventReader reads the payloads of a chat completion event stream.
type eventReader struct {
	br         *bufio.Reader
	emptyLimit uint   // the client's EmptyMessagesLimit
	long       []byte // a line longer than br's buffer, gathered
	// notData is go-openai's error accumulator: the lines that were not
	// data, and payloads that opened with an error, run together.
	// Appending stops once it cannot be an error object (it does not open
	// with "{"): go-openai would keep it, only to fail to decode it.
	notData    []byte
	notAnError bool
	done       bool // [DONE] was read
}

// emptyMessagesLimit is go-openai's default EmptyMessagesLimit, which zen
// never changes: the event reader keeps it as go-openai's own reader would.
var emptyMessagesLimit = openai.DefaultConfig("").EmptyMessagesLimit

// lineReaders keeps the event readers' buffers between calls: a 4 KiB
// buffer per call was the largest allocation on the router's path.
var lineReaders = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

// newEventReader reads events from body, failing after more than
// emptyLimit lines without data in a row. release gives its buffer back.
func newEventReader(body io.Reader, emptyLimit uint) *eventReader {
	br := lineReaders.Get().(*bufio.Reader)
	br.Reset(body)
	return &eventReader{br: br, emptyLimit: emptyLimit}
}

// release returns the reader's buffer for another call; r reads nothing
// after it.
func (r *eventReader) release() {
	r.br.Reset(nil)
	lineReaders.Put(r.br)
	r.br = nil
}

var (
	dataField   = []byte("data:")
	errorOpener = []byte(`{"error":`)
	doneMarker  = []byte("[DONE]")
)

// next decodes the next payload into chunk, or returns io.EOF at the end of
// the stream, an error the provider sent (an *openai.APIError), or why the
// stream could not be read.
func (r *eventReader) next(chunk *streamChunk) error {
	payload, err := r.payload()
	if err != nil {
		return err
	}
	return decodeChunk(payload, chunk)
}

// payload is go-openai's processLines: the next data line's payload.
func (r *eventReader) payload() ([]byte, error) {
	if r.done {
		return nil, io.EOF
	}
	var empty uint
	sawError := false
	for {
		line, readErr := r.line()
		if readErr != nil || sawError {
			if apiErr := r.sentError(); apiErr != nil {
				return nil, fmt.Errorf("error, %w", apiErr)
			}
			return nil, readErr
		}
		line = bytes.TrimSpace(line)
		payload, isData := bytes.CutPrefix(line, dataField)
		if isData {
			payload = trimSpaceRE(payload)
			sawError = bytes.HasPrefix(payload, errorOpener)
		}
		if !isData || sawError {
			if sawError {
				line = payload
			}
			r.keepNotData(line)
			if empty++; empty > r.emptyLimit {
				return nil, openai.ErrTooManyEmptyStreamMessages
			}
			continue
		}
		if bytes.Equal(payload, doneMarker) {
			r.done = true
			return nil, io.EOF
		}
		return payload, nil
	}
}

// line reads one line with its newline, valid until the next read. At the
// end of the body it returns the error alone, as bufio's ReadBytes does
// with a line that has no newline, which go-openai then drops.
func (r *eventReader) line() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	r.long = append(r.long[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		r.long = append(r.long, line...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return r.long, err
		}
	}
}

// trimSpaceRE trims the white space regexp's \s matches (ASCII only, and
// not \v) from the front of b, as go-openai's `^data:\s*` does.
func trimSpaceRE(b []byte) []byte {
	for len(b) > 0 {
		switch b[0] {
		case ' ', '\t', '\n', '\f', '\r':
			b = b[1:]
		default:
			return b
		}
	}
	return b
}

func (r *eventReader) keepNotData(line []byte) {
	if r.notAnError || len(line) == 0 {
		return
	}
	if len(r.notData) == 0 && line[0] != '{' {
		r.notAnError = true
		return
	}
	r.notData = append(r.notData, line...)
}

// sentError is the OpenAI error the lines that were not data spell, if
// they spell one.
func (r *eventReader) sentError() *openai.APIError {
	if r.notAnError || len(r.notData) == 0 {
		return nil
	}
	var resp openai.ErrorResponse
	if err := json.Unmarshal(r.notData, &resp); err != nil {
		return nil
	}
	return resp.Error
}

// reusedChoices is the most choices decodeChunk keeps for the next chunk:
// real streams send one. Clearing a larger array before every chunk would
// let one chunk of a million empty choices make each later chunk cost as
// much again.
const reusedChoices = 4

// decodeChunk decodes a payload into chunk, reusing its choices.
func decodeChunk(payload []byte, chunk *streamChunk) error {
	var choices []streamChoice
	if cap(chunk.Choices) <= reusedChoices {
		choices = chunk.Choices[:cap(chunk.Choices)]
		clear(choices) // json fills a reused element only where the payload has a field
	}
	*chunk = streamChunk{Choices: choices[:0]}
	if scanChunk(payload, chunk) {
		return nil
	}
	clear(choices)
	*chunk = streamChunk{Choices: choices[:0]}
	if err := json.Unmarshal(payload, chunk); err != nil {
		// go-openai's words: its error names its own types and fields.
		var full openai.ChatCompletionStreamResponse
		if fullErr := json.Unmarshal(payload, &full); fullErr != nil {
			return fullErr
		}
		return err
	}
	return nil
}
