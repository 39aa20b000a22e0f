// Command fakeprobe times a model's streamed reply from a process of its
// own, for BenchmarkContinuedChat: it posts one request body (a file) to a
// URL again and again on one kept-alive connection, reads each reply to
// the end, and prints the median time of the last ones in nanoseconds.
//
// The benchmark's fake lives in the benchmark's own process, so a request
// it sends the fake itself never wakes another process; zen's router, and
// any real client of a real provider, always does. The median from here is
// the fake as a client in another process finds it.
//
//	fakeprobe URL BODY_FILE
//
// It exits non-zero, saying why on stderr, when a reply is not a 200
// stream that ends with data: [DONE].
package main
