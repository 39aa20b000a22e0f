package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestASlowReaderYieldsTheRoomToOthers: the gateway holds the threads it
// reads whole within a room, as long as their readers take to read them;
// one client reading a thread at the room's bound slowly (6 KB/s: an hour
// and a half) had every other client's read of a thread of megabytes
// refused after its wait, again and again. Past a lease, while another
// client waits, the slow read is cut off and the other is served.
func TestASlowReaderYieldsTheRoomToOthers(t *testing.T) {
	t.Parallel()
	_, gateway := aliceAndBob(t, fakeEnv(fakemodel.New(t)))
	address := strings.TrimPrefix(gateway, "http://")
	thread := func(token string, turns int) string {
		var list []any
		for i := range turns {
			role := []string{"ROLE_USER", "ROLE_ASSISTANT"}[i%2]
			list = append(list, map[string]any{"role": role, "content": strings.Repeat("x", 2_000_000)})
		}
		id := uuid.NewString()
		line, _ := json.Marshal(map[string]any{"thread_id": id, "tool_name": "chat", "turns": list})
		if code, body := request(t, "POST", gateway+"/v1/threads:import", token, string(line)+"\n"); code != 200 {
			t.Fatalf("import: %d %s", code, body)
		}
		return id
	}
	bobs, alices := thread(bobToken, 16), thread(aliceToken, 1) // 31 MiB and 2 MiB: past the room together

	// Bob asks for his thread of 32 MB, or its export, reads the first
	// bytes of the answer and no more.
	for _, path := range []string{"/v1/threads/" + bobs, "/v1/threads:export?thread_id=" + bobs} {
		conn, err := net.DialTCP("tcp", nil, tcpAddrOf(t, address))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetReadBuffer(4 << 10)
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, address,
			bobToken)
		if _, err := conn.Read(make([]byte, 1)); err != nil {
			t.Fatalf("bob's answer: %v", err)
		}
		// Within her wait: bob's read has a lease of 3 s, then goes.
		if code, body := request(t, "GET", gateway+"/v1/threads/"+alices, aliceToken, ""); code != 200 {
			t.Errorf("alice's read while bob's slow %s holds the room: %d %.300s, want 200", path, code, body)
		}
		// Bob's answer was cut off, and does not read as whole: its
		// chunked body never ends (a whole one would, and its connection
		// stay open).
		_ = conn.SetReadBuffer(1 << 20)
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		if rest, _ := io.ReadAll(conn); strings.Contains(string(rest), "\r\n0\r\n\r\n") {
			t.Errorf("bob's cut answer to %s ended as if whole", path)
		}
	}
}

func tcpAddrOf(t *testing.T, addr string) *net.TCPAddr {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
