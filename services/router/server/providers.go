package server

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/zenmcp/zen/services/platform/config"
)

// ProviderConfig is one provider's settings.
type ProviderConfig struct {
	Name        string // gemini, openai, azure, xai, dial, custom, openrouter
	Label       string // how messages name it
	Kind        string // compat, azure (deployment URLs) or gemini
	APIKey      string
	BaseURL     string
	APIVersion  string // azure and dial
	CatalogPath string
	Allowed     []string // names and aliases; empty allows every model
	Headers     map[string]string
	Configured  bool
}

// spec says where a provider's settings live.
type spec struct {
	name, label, kind string
	keyVar            string   // the key that enables it ("" when none: a URL does)
	needsURL          bool     // the key enables it only with a URL set (no default endpoint)
	urlVars           []string // base URL variables, first set wins
	defaultURL        string
	allowVars         []string
	versionVar        string
	defaultVersion    string
	hint              string // what setupHelp says after the variables
}

// specs are in the reference's priority order: a name two providers know
// goes to the first configured one.
var specs = []spec{
	{name: "gemini", label: "Gemini", kind: "gemini", keyVar: "GEMINI_API_KEY", urlVars: []string{"GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"},
		allowVars: []string{"GOOGLE_ALLOWED_MODELS"}},
	{name: "openai", label: "OpenAI", kind: "compat", keyVar: "OPENAI_API_KEY", urlVars: []string{"OPENAI_BASE_URL"},
		defaultURL: "https://api.openai.com/v1", allowVars: []string{"OPENAI_ALLOWED_MODELS"},
		hint: "with OPENAI_BASE_URL for any OpenAI-compatible server"},
	{name: "azure", label: "Azure OpenAI", kind: "azure", keyVar: "AZURE_OPENAI_API_KEY", needsURL: true,
		urlVars: []string{"AZURE_OPENAI_ENDPOINT"}, allowVars: []string{"AZURE_OPENAI_ALLOWED_MODELS", "AZURE_ALLOWED_MODELS"},
		versionVar: "AZURE_OPENAI_API_VERSION", defaultVersion: "2024-02-15-preview"},
	{name: "xai", label: "X.AI", kind: "compat", keyVar: "XAI_API_KEY", urlVars: []string{"XAI_BASE_URL"},
		defaultURL: "https://api.x.ai/v1", allowVars: []string{"XAI_ALLOWED_MODELS"}},
	{name: "dial", label: "DIAL", kind: "azure", keyVar: "DIAL_API_KEY", urlVars: []string{"DIAL_API_HOST"},
		defaultURL: "https://core.dialx.ai", allowVars: []string{"DIAL_ALLOWED_MODELS"}, versionVar: "DIAL_API_VERSION", defaultVersion: "2024-12-01-preview"},
	{name: "custom", label: "Custom API", kind: "compat", urlVars: []string{"CUSTOM_API_URL"}, allowVars: []string{"CUSTOM_ALLOWED_MODELS"},
		hint: "a local server such as Ollama; no key needed"},
	{name: "openrouter", label: "OpenRouter", kind: "compat", keyVar: "OPENROUTER_API_KEY", urlVars: []string{"OPENROUTER_BASE_URL"},
		defaultURL: "https://openrouter.ai/api/v1", allowVars: []string{"OPENROUTER_ALLOWED_MODELS"}},
}

// CatalogueVars are the variables naming files that replace a provider's
// model catalogue (<PROVIDER>_MODELS_CONFIG_PATH), so that the edge can
// keep clients' file arguments away from zen's own configuration.
func CatalogueVars() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = catalogueVar(s.name)
	}
	return out
}

func catalogueVar(provider string) string { return strings.ToUpper(provider) + "_MODELS_CONFIG_PATH" }

// envFilesInGeneral says where zen's .env files are without naming their
// absolute paths, which only the user running zen may see (see
// Config.ShowEnvFiles).
const envFilesInGeneral = ".env in zen's working directory or the user-level zen/.env under XDG_CONFIG_HOME, " +
	"~/.config by default"

// setupHelp says how to configure a provider: each provider's variable, in
// priority order, and where zen reads them: files, in precedence order, or
// envFilesInGeneral when files is empty.
func setupHelp(files []string) string {
	var vars []string
	for _, s := range specs {
		v := s.keyVar
		switch {
		case s.keyVar == "":
			v = s.urlVars[0]
		case s.needsURL:
			v += " with " + s.urlVars[0]
		}
		if s.hint != "" {
			v += " (" + s.hint + ")"
		}
		vars = append(vars, v)
	}
	where := "in zen's environment or in a .env file zen reads (" + envFilesInGeneral +
		"; the environment wins over the files, and the first file over the next)"
	switch len(files) {
	case 0:
	case 1:
		where = "in zen's environment or in " + files[0] + " (the environment wins over the file)"
	default:
		where = "in zen's environment or in a .env file zen reads (" + strings.Join(files, ", then ") +
			"; the environment wins over the files, and the first file over the next)"
	}
	return "set " + strings.Join(vars[:len(vars)-1], ", ") + " or " + vars[len(vars)-1] + " " + where +
		", then restart zen"
}

// customKeyless is what the Custom provider sends when CUSTOM_API_KEY is
// empty: self-hosted servers ignore it, client libraries want one.
const customKeyless = "dummy-key-for-unauthenticated-endpoint"

// placeholder tells whether a key is still the .env.example text.
func placeholder(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "your_") && strings.HasSuffix(k, "_here")
}

func loadProvider(getenv config.Getenv, s spec) (ProviderConfig, error) {
	pc := ProviderConfig{Name: s.name, Label: s.label, Kind: s.kind, BaseURL: s.defaultURL,
		CatalogPath: getenv(catalogueVar(s.name))}
	urlVar := ""
	for _, v := range s.urlVars {
		if u := config.String(getenv, v, ""); u != "" {
			pc.BaseURL, urlVar = u, v
			break
		}
	}
	if urlVar != "" {
		if err := checkURL(urlVar, pc.BaseURL); err != nil {
			return pc, err
		}
	}
	for _, v := range s.allowVars {
		if list := config.List(getenv, v); len(list) > 0 {
			pc.Allowed = list
			break
		}
	}
	if s.versionVar != "" {
		pc.APIVersion = config.String(getenv, s.versionVar, s.defaultVersion)
	}
	if s.keyVar == "" { // Custom: its key is optional
		pc.APIKey = config.String(getenv, "CUSTOM_API_KEY", customKeyless)
		pc.Configured = urlVar != ""
	} else {
		pc.APIKey = config.String(getenv, s.keyVar, "")
		pc.Configured = pc.APIKey != "" && !placeholder(pc.APIKey) && (!s.needsURL || urlVar != "")
	}
	if s.name == "openrouter" {
		pc.Headers = map[string]string{
			"HTTP-Referer": config.String(getenv, "OPENROUTER_REFERER", "https://github.com/zenmcp/zen"),
			"X-Title":      config.String(getenv, "OPENROUTER_TITLE", "zen MCP server"),
		}
	}
	return pc, nil
}

// checkURL refuses base URLs that are not plain http(s) addresses.
func checkURL(key, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%s=%q: want an http or https URL such as http://localhost:11434/v1", key, raw)
	}
	if p := u.Port(); p != "" {
		if n, err := fmt.Sscan(p, new(int)); err != nil || n != 1 {
			return fmt.Errorf("%s=%q: the port must be a number from 1 to 65535", key, raw)
		}
	}
	return nil
}
