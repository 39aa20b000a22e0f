package main

import "github.com/zenmcp/zen/services/platform/hostguard"

// checkExposure refuses, before anything starts, to serve HTTP beyond
// loopback without ZEN_ALLOWED_HOSTS: such a server would answer any Host,
// and so any web page by DNS rebinding, or refuse every client off the
// machine; a start-up error names the setting instead (see
// hostguard.CheckListener).
func checkExposure(s *settings, role string) error {
	hosts, err := hostguard.Load(s.getenv)
	if err != nil {
		return err
	}
	var listeners [][2]string // variable, address
	if role == "serve" || role == "edge" {
		listeners = append(listeners, [2]string{"ZEN_MCP_ADDR", s.mcpAddr})
	}
	if role == "serve" || role == "gateway" {
		listeners = append(listeners, [2]string{"ZEN_HTTP_ADDR", s.httpAddr})
	}
	for _, l := range listeners {
		if err := hosts.CheckListener(l[0], l[1]); err != nil {
			return err
		}
	}
	return nil
}
