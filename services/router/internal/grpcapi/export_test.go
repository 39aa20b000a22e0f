package grpcapi

import "time"

// SetDeltaEvery changes how often deltas go out, for tests.
func (s *Server) SetDeltaEvery(d time.Duration) { s.deltaEvery = d }
