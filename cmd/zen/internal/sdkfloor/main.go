package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "sdkfloor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	model := getenv("CUSTOM_API_URL")
	if model == "" {
		return errors.New("CUSTOM_API_URL names no model endpoint: set it to an OpenAI-compatible base URL")
	}
	schema := json.RawMessage(`{"type":"object"}`)
	if s := getenv("SDKFLOOR_INPUT_SCHEMA"); s != "" {
		if !json.Valid([]byte(s)) {
			return errors.New("SDKFLOOR_INPUT_SCHEMA is not JSON: give chat's input schema, or leave it unset")
		}
		schema = json.RawMessage(s)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "sdkfloor", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "chat", InputSchema: schema}, chat(model))
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true, DisableLocalhostProtection: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	line, _ := json.Marshal(map[string]string{"msg": "listening", "listener": "mcp", "addr": lis.Addr().String()})
	fmt.Fprintln(os.Stderr, string(line))
	if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// chat streams one completion of the prompt and answers with the thread id
// it was given, or a fixed one.
func chat(model string) mcp.ToolHandler {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Prompt         string `json:"prompt"`
			Model          string `json:"model"`
			ContinuationID string `json:"continuation_id"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, fmt.Errorf("read the arguments: %w", err)
		}
		body, _ := json.Marshal(map[string]any{"model": args.Model, "stream": true,
			"messages": []map[string]string{{"role": "user", "content": args.Prompt}}})
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, model+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("ask the model: %w", err)
		}
		hreq.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(hreq)
		if err != nil {
			return nil, fmt.Errorf("ask the model: %w", err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the model's reply: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("the model answered %s", resp.Status)
		}
		id := args.ContinuationID
		if id == "" {
			id = "0199a0b2-7d0e-7c4e-9b6a-3f1f3c9a1d2e"
		}
		text, _ := json.Marshal(map[string]any{"status": "continuation_available", "content": "fake reply",
			"continuation_offer": map[string]any{"continuation_id": id, "remaining_turns": 49}})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
	}
}
