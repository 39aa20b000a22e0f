package clink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Parsed is what a CLI answered.
type Parsed struct {
	Content string
	// Model is the model the CLI says answered, when it says ("": the CLI
	// is the model, as far as zen can tell).
	Model    string
	Metadata map[string]any
}

type parser func(stdout, stderr string) (Parsed, error)

// ParserName is the output format the client's CLI speaks.
func ParserName(c Client) string {
	if c.Parser != "" {
		return c.Parser
	}
	switch c.Name {
	case "codex":
		return "codex_jsonl"
	case "claude":
		return "claude_json"
	}
	return "gemini_json"
}

func parserFor(c Client) (parser, error) {
	switch name := ParserName(c); name {
	case "gemini_json":
		return parseGemini, nil
	case "codex_jsonl":
		return parseCodex, nil
	case "claude_json":
		return parseClaude, nil
	case "text":
		return func(stdout, _ string) (Parsed, error) { return Parsed{Content: strings.TrimSpace(stdout)}, nil }, nil
	default:
		return nil, fmt.Errorf("unknown parser %q (gemini_json, codex_jsonl, claude_json or text)", name)
	}
}

// Parse reads a run's output in the client's format. It also serves a run
// that exited non-zero: some CLIs report their errors in the same format.
func Parse(c Client, r *Run) (Parsed, error) {
	p, err := parserFor(c)
	if err != nil {
		return Parsed{}, err
	}
	return p(r.Stdout, r.Stderr)
}

// gemini -o json prints {"response": "...", "stats": {...}} or
// {"error": {"message": ...}}.
func parseGemini(stdout, _ string) (Parsed, error) {
	var out struct {
		Response string         `json:"response"`
		Stats    map[string]any `json:"stats"`
		Error    *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	var order struct {
		Stats struct {
			Models json.RawMessage `json:"models"`
		} `json:"stats"`
	}
	raw := []byte(jsonStart(stdout))
	if err := json.Unmarshal(raw, &out); err != nil {
		return Parsed{}, fmt.Errorf("gemini output is not the expected JSON: %w", err)
	}
	_ = json.Unmarshal(raw, &order) // decoded once above: it cannot fail here
	if out.Error != nil && out.Response == "" {
		return Parsed{}, fmt.Errorf("gemini reported an error: %s", out.Error.Message)
	}
	meta := map[string]any{}
	if out.Stats != nil {
		meta["stats"] = out.Stats
	}
	p := Parsed{Content: strings.TrimSpace(out.Response), Metadata: meta}
	// stats.models holds a model per name; the first, as gemini writes
	// them, is the one that answered (the reference's reading).
	models, _ := out.Stats["models"].(map[string]any)
	if p.Model = firstKey(order.Stats.Models); p.Model != "" {
		m, _ := models[p.Model].(map[string]any)
		if tokens, ok := m["tokens"].(map[string]any); ok {
			meta["token_usage"] = tokens
		}
		api, _ := m["api"].(map[string]any)
		if ms, ok := api["totalLatencyMs"].(float64); ok {
			meta["latency_ms"] = ms
		}
	}
	return p, nil
}

// firstKey is the first key of a JSON object as written, or "".
func firstKey(object json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(object))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	key, _ := dec.Token()
	name, _ := key.(string)
	return name
}

// codex exec --json prints one event per line; the answer is the text of
// the completed agent messages.
func parseCodex(stdout, _ string) (Parsed, error) {
	var texts, errs []string
	var usage any
	events := 0
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), maxStream)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
			Usage   any    `json:"usage"`
			Message string `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		events++
		switch {
		case ev.Type == "item.completed" && ev.Item.Type == "agent_message":
			texts = append(texts, ev.Item.Text)
		case ev.Type == "turn.completed":
			usage = ev.Usage
		case ev.Type == "error":
			errs = append(errs, ev.Message)
		}
	}
	if len(texts) == 0 {
		if len(errs) > 0 {
			return Parsed{}, fmt.Errorf("codex reported an error: %s", strings.Join(errs, "; "))
		}
		return Parsed{}, fmt.Errorf("codex output held no agent message (%d events)", events)
	}
	meta := map[string]any{"events": events}
	if usage != nil {
		meta["usage"] = usage
	}
	return Parsed{Content: strings.TrimSpace(strings.Join(texts, "\n\n")), Metadata: meta}, nil
}

// claudeResult is the result event of claude --print --output-format json.
type claudeResult struct {
	Result     string         `json:"result"`
	IsError    bool           `json:"is_error"`
	Usage      map[string]any `json:"usage"`
	DurationMs float64        `json:"duration_ms"`
}

// claude --print --output-format json prints {"type":"result","result":...},
// or, in newer CLIs, an array of events whose result event is the same.
func parseClaude(stdout, _ string) (Parsed, error) {
	var out claudeResult
	if events, ok := claudeEvents(stdout); ok {
		i := slices.IndexFunc(events, func(e json.RawMessage) bool {
			var head struct{ Type string }
			return json.Unmarshal(e, &head) == nil && head.Type == "result"
		})
		if i < 0 {
			return Parsed{}, errors.New("claude output holds no result event")
		}
		if err := json.Unmarshal(events[i], &out); err != nil {
			return Parsed{}, fmt.Errorf("claude's result event is not the expected JSON: %w", err)
		}
	} else if err := json.Unmarshal([]byte(jsonStart(stdout)), &out); err != nil {
		return Parsed{}, fmt.Errorf("claude output is not the expected JSON: %w", err)
	}
	if out.IsError {
		return Parsed{}, fmt.Errorf("claude reported an error: %s", out.Result)
	}
	meta := map[string]any{}
	if out.Usage != nil {
		meta["usage"] = out.Usage
	}
	if out.DurationMs > 0 {
		meta["latency_ms"] = out.DurationMs
	}
	return Parsed{Content: strings.TrimSpace(out.Result), Metadata: meta}, nil
}

// claudeEvents reads claude's output as an array of events, when it is one
// (after whatever the CLI printed before it, and before whatever after),
// each as it is: an event of a kind zen does not read is no failure.
func claudeEvents(stdout string) ([]json.RawMessage, bool) {
	i := strings.IndexByte(stdout, '[')
	if j := strings.IndexByte(stdout, '{'); i < 0 || j >= 0 && j < i {
		return nil, false
	}
	var events []json.RawMessage
	if json.NewDecoder(strings.NewReader(stdout[i:])).Decode(&events) != nil {
		return nil, false
	}
	return events, true
}

// jsonStart skips anything a CLI prints before its JSON (banners, warnings).
func jsonStart(s string) string {
	if i := strings.IndexByte(s, '{'); i > 0 {
		return s[i:]
	}
	return s
}
