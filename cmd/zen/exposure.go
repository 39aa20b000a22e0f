package main

import (
	"log/slog"

	"github.com/zenmcp/zen/services/platform/hostguard"
)

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

// noteOpenPorts warns, at start, a role that takes MCP or gateway calls
// without client tokens: whoever reaches its ports (every user and process
// of the machine, on loopback) calls it as its owner, reads the files
// under its roots and spends its keys. On one person's machine that is
// the point; on a shared one it is not, and nothing said so.
func noteOpenPorts(logger *slog.Logger, s *settings, role string) {
	if role != "serve" && role != "edge" && role != "gateway" {
		return
	}
	if s.clientTokens {
		return
	}
	logger.Warn("zen takes calls without a client token: every user and process of this machine (and of its " +
		"network, for a port beyond loopback) may call it as you, read the files under its roots and spend its " +
		"provider keys; unless you are the machine's only user, set ZEN_AUTH_TOKEN or ZEN_AUTH_TOKENS_FILE")
}
