package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"
)

// Requests sent, and of them the first ones left out of the median: they
// open the connection and warm both processes.
const (
	requests = 400
	warm     = 100
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fakeprobe URL BODY_FILE")
		os.Exit(2)
	}
	median, err := probe(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeprobe:", err)
		os.Exit(1)
	}
	fmt.Println(median.Nanoseconds())
}

// probe is the median time of a streamed reply to the request in file,
// posted to url.
func probe(url, file string) (time.Duration, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	times := make([]time.Duration, 0, requests)
	for range requests {
		t0 := time.Now()
		resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		reply, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK || !bytes.Contains(reply, []byte("data: [DONE]")) {
			return 0, fmt.Errorf("not a whole stream: HTTP %d, %q", resp.StatusCode, reply)
		}
		times = append(times, time.Since(t0))
	}
	times = times[warm:]
	slices.Sort(times)
	return times[len(times)/2], nil
}
