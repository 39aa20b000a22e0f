package storetest

import "runtime"

// HeapBytes is the heap in use once garbage is collected, for tests that
// measure what a store keeps. Such tests do not run in parallel.
func HeapBytes() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
