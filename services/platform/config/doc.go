// Package config reads settings from the environment and from .env files,
// and parses them into typed values whose errors name the bad variable.
package config
