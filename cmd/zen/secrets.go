package main

import (
	"os"
	"strings"

	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/secrets"
)

// loadSecrets collects zen's secret values, scrubbed from every log line
// and result. Provider keys are found by name among the variables of the
// process and of the .env files, since getenv cannot list them.
func loadSecrets(getenv config.Getenv, dotEnvs ...string) *secrets.Scrubber {
	var names []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	for _, path := range dotEnvs {
		if values, err := config.ReadDotEnv(path); err == nil {
			for k := range values {
				names = append(names, k)
			}
		}
	}
	return secrets.Load(getenv, names)
}
