package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/zenmcp/zen/services/platform/config"
)

// HTTPTimeouts bound the HTTP phases of a provider call. They are the
// reference's CUSTOM_*_TIMEOUT variables, which, despite their names,
// apply to every provider there (Gemini takes the largest) and here.
type HTTPTimeouts struct {
	Connect time.Duration // CUSTOM_CONNECT_TIMEOUT, default 30s: dialing
	Pool    time.Duration // CUSTOM_POOL_TIMEOUT, default none: waiting for a connection
	Write   time.Duration // CUSTOM_WRITE_TIMEOUT, default none: sending the request
}

// loadTimeouts reads the reference's timeouts into c. Its read timeout, the
// longest wait for the next part of a reply, is zen's idle timeout: the
// reference's name sets it, and zen's own, ZEN_PROVIDER_IDLE_TIMEOUT, wins
// when both are set. Unset pool and write timeouts leave those phases to
// the idle timeout, which runs from the start of each attempt.
func loadTimeouts(getenv config.Getenv, c *Config) error {
	var err error
	if c.HTTP.Connect, err = referenceTimeout(getenv, "CUSTOM_CONNECT_TIMEOUT", 30*time.Second); err != nil {
		return err
	}
	if c.HTTP.Pool, err = referenceTimeout(getenv, "CUSTOM_POOL_TIMEOUT", 0); err != nil {
		return err
	}
	if c.HTTP.Write, err = referenceTimeout(getenv, "CUSTOM_WRITE_TIMEOUT", 0); err != nil {
		return err
	}
	read, err := referenceTimeout(getenv, "CUSTOM_READ_TIMEOUT", c.Policy.IdleTimeout)
	if err != nil {
		return err
	}
	c.Policy.IdleTimeout, err = config.Duration(getenv, "ZEN_PROVIDER_IDLE_TIMEOUT", read, time.Second, 24*time.Hour)
	return err
}

// referenceTimeout reads a number of seconds, fractions allowed, as the
// reference does (a Go duration such as 10m works too), or def when unset.
func referenceTimeout(getenv config.Getenv, key string, def time.Duration) (time.Duration, error) {
	d, err := config.Duration(getenv, key, def, 100*time.Millisecond, 24*time.Hour)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a number of seconds from 0.1 to 86400, such as 600 or 2.5 "+
			"(a duration such as 10m works too)", key, strings.TrimSpace(getenv(key)))
	}
	return d, nil
}
