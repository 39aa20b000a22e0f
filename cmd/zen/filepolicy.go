package main

import (
	"fmt"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"path/filepath"
	"slices"
	"strings"

	edgeserver "github.com/zenmcp/zen/services/edge/server"
	memoryserver "github.com/zenmcp/zen/services/memory/server"
	"github.com/zenmcp/zen/services/platform/config"
	routerserver "github.com/zenmcp/zen/services/router/server"
)

// dotEnvFile is the .env zen reads from its working directory.
const dotEnvFile = ".env"

// fileSettings completes the edge's file policy with what only the binary
// knows: whether the edge serves other people, and which files every role
// reads its configuration and secrets from. overHTTP is false for stdio,
// which always serves the one person who started it.
func fileSettings(c *edgeserver.FileConfig, s *settings, overHTTP bool) {
	if overHTTP {
		c.Shared = sharedServer(s.getenv, s.mcpAddr)
	}
	c.Own = append(zenOwnFiles(s.getenv, s.envFiles), logFiles(s.logFile)...)
}

// sharedServer says why an edge whose MCP listens at mcpAddr serves
// clients whose disk is not this machine's, or "" on one person's machine
// (loopback, no tokens file). A single ZEN_AUTH_TOKEN on loopback is still
// one person's machine.
func sharedServer(getenv config.Getenv, mcpAddr string) string {
	if strings.TrimSpace(getenv("ZEN_AUTH_TOKENS_FILE")) != "" {
		return "ZEN_AUTH_TOKENS_FILE names its clients"
	}
	if !hostguard.Loopback(mcpAddr) {
		return fmt.Sprintf("its MCP listener %s is not on loopback", mcpAddr)
	}
	return ""
}

// ownServer says whether role serves its one user alone, on this machine,
// so that its clients may see the paths of zen's own files (the .env
// files, in the router's setup help): stdio, and serve when sharedServer
// finds no one else and the gateway and gRPC listeners are on loopback
// too. A router role serves other roles, which may serve anyone.
func ownServer(s *settings, role string) bool {
	switch role {
	case "stdio":
		return true
	case "serve":
		return sharedServer(s.getenv, s.mcpAddr) == "" && hostguard.Loopback(s.httpAddr) &&
			hostguard.Loopback(s.grpcAddr)
	}
	return false
}

// ownFileVars name the files zen reads its secrets and configuration from,
// besides the model catalogues.
var ownFileVars = []string{"ZEN_AUTH_TOKENS_FILE", "CLI_CLIENTS_CONFIG_PATH", "ZEN_GRPC_TLS_CERT", "ZEN_GRPC_TLS_KEY",
	"ZEN_GRPC_TLS_CA"}

// zenOwnFiles lists the files and directories zen reads its configuration
// and secrets from, and the threads it keeps: the .env files it reads
// (envFiles), the files the variables name, the user's clink
// configurations and the SQLite data directory. No client may name them.
func zenOwnFiles(getenv config.Getenv, envFiles []string) []string {
	out := slices.Clone(envFiles)
	for _, v := range slices.Concat(ownFileVars, routerserver.CatalogueVars()) {
		if p := strings.TrimSpace(getenv(v)); p != "" {
			out = append(out, p)
		}
	}
	if home := getenv("HOME"); home != "" {
		out = append(out, filepath.Join(home, ".zen", "cli_clients")) // the executor's user configs
	}
	if dir := memoryserver.DataDir(getenv); dir != "" {
		// The directory by its paths; its store's files by identity as well
		// (Policy.ownFile), so that a hard link to one elsewhere is refused.
		out = append(append(out, dir), memoryserver.StoreFiles(dir)...)
	}
	return out
}
