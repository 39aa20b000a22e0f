package config

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Getenv looks a variable up; it returns "" when the variable is unset.
type Getenv func(string) string

// forceOverrideKey, read only from .env, makes .env win over the process
// environment, as the upstream server's variable of the same meaning does.
const forceOverrideKey = "ZEN_MCP_FORCE_ENV_OVERRIDE"

// WithDotEnvFiles layers .env files under the process environment, the
// first file over the later ones: a variable set in the process wins, then
// the first file that sets it. When the files set
// ZEN_MCP_FORCE_ENV_OVERRIDE to true (read as every Bool), only the files
// are consulted (the upstream server's meaning, with its one file). Missing
// files are skipped.
func WithDotEnvFiles(paths []string, getenv Getenv) (Getenv, error) {
	values := map[string]string{}
	found := false
	for _, path := range paths {
		file, err := ReadDotEnv(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		for k, v := range file {
			if _, set := values[k]; !set {
				values[k] = v
			}
		}
	}
	if !found {
		return getenv, nil
	}
	force, err := Bool(func(k string) string { return values[k] }, forceOverrideKey, false)
	if err != nil {
		return nil, err
	}
	if force {
		return func(k string) string { return values[k] }, nil
	}
	return func(k string) string {
		if v, ok := lookupProcess(getenv, k); ok {
			return v
		}
		return values[k]
	}, nil
}

// lookupProcess treats an empty process value as unset, so .env can fill it.
func lookupProcess(getenv Getenv, k string) (string, bool) {
	v := getenv(k)
	return v, v != ""
}

// ReadDotEnv parses KEY=VALUE lines. Blank lines and lines starting with # are
// skipped; "export " prefixes and matching quotes around values are removed.
func ReadDotEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	values := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected KEY=VALUE, got %q", path, n, line)
		}
		values[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return values, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	if i := strings.Index(v, " #"); i >= 0 {
		return strings.TrimSpace(v[:i])
	}
	return v
}

// String returns the variable or def when it is unset.
func String(getenv Getenv, key, def string) string {
	if v := strings.TrimSpace(getenv(key)); v != "" {
		return v
	}
	return def
}

// Int parses a whole number within [lo, hi], or returns def when unset.
func Int(getenv Getenv, key string, def, lo, hi int) (int, error) {
	raw := strings.TrimSpace(getenv(key))
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q: want a whole number from %d to %d", key, raw, lo, hi)
	}
	return n, nil
}

// Hours parses a positive number of hours, fractions allowed, or returns def
// when unset.
func Hours(getenv Getenv, key string, def time.Duration) (time.Duration, error) {
	raw := strings.TrimSpace(getenv(key))
	if raw == "" {
		return def, nil
	}
	h, err := strconv.ParseFloat(raw, 64)
	if err != nil || h <= 0 || h > 24*365 {
		return 0, fmt.Errorf("%s=%q: want a positive number of hours, such as 3 or 0.5", key, raw)
	}
	return time.Duration(h * float64(time.Hour)), nil
}

// Bool parses true/false (and 1/0, yes/no, on/off), or returns def when unset.
func Bool(getenv Getenv, key string, def bool) (bool, error) {
	raw := strings.ToLower(strings.TrimSpace(getenv(key)))
	switch raw {
	case "":
		return def, nil
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: want true or false", key, raw)
}

// List splits a comma list, trimming spaces and dropping empty entries.
func List(getenv Getenv, key string) []string {
	var out []string
	for _, p := range strings.Split(getenv(key), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Addr checks a host:port address, or returns def when unset.
func Addr(getenv Getenv, key, def string) (string, error) {
	v := String(getenv, key, def)
	if v == "" {
		return "", nil
	}
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("%s=%q: want host:port, such as 127.0.0.1:9090", key, v)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("%s=%q: the port must be a number from 0 to 65535", key, v)
	}
	return v, nil
}

// Duration parses a Go duration (90s, 5m, 1h30m) within [lo, hi], or a
// plain number of seconds, or returns def when unset.
func Duration(getenv Getenv, key string, def, lo, hi time.Duration) (time.Duration, error) {
	raw := strings.TrimSpace(getenv(key))
	if raw == "" {
		return def, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		secs, ferr := strconv.ParseFloat(raw, 64)
		if ferr != nil {
			return 0, fmt.Errorf("%s=%q: want a duration such as 90s or 5m", key, raw)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < lo || d > hi {
		return 0, fmt.Errorf("%s=%q: want a duration from %s to %s", key, raw, lo, hi)
	}
	return d, nil
}
