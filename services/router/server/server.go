// Package server is what the zen binary wires to run the router role: its
// configuration and its gRPC registration.
package server

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/dispatch"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
	"google.golang.org/grpc"
)

// ServiceName is the gRPC service this role serves, for health checks.
const ServiceName = "zen.router.v1.RouterService"

// ProviderConfig is one provider's settings.
type ProviderConfig struct {
	Name        string // openai, custom
	Label       string // how errors name it
	APIKey      string
	BaseURL     string
	CatalogPath string
	Configured  bool
}

// Config is the router role's configuration.
type Config struct {
	Providers    []ProviderConfig // priority order
	DefaultModel string           // DEFAULT_MODEL
	Policy       dispatch.Policy  // ZEN_PROVIDER_TIMEOUT, ZEN_PROVIDER_IDLE_TIMEOUT, ZEN_PROVIDER_ATTEMPTS
}

// customKeyless is what the Custom provider sends when CUSTOM_API_KEY is
// empty: self-hosted servers ignore it, client libraries want one.
const customKeyless = "dummy-key-for-unauthenticated-endpoint"

// placeholder tells whether a key is still the .env.example text.
func placeholder(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "your_") && strings.HasSuffix(k, "_here")
}

// Load reads the configuration; errors name the bad variable.
func Load(getenv config.Getenv) (Config, error) {
	c := Config{DefaultModel: config.String(getenv, "DEFAULT_MODEL", "auto"), Policy: dispatch.DefaultPolicy}
	var err error
	if c.Policy.Deadline, err = config.Duration(getenv, "ZEN_PROVIDER_TIMEOUT", c.Policy.Deadline, time.Second, 24*time.Hour); err != nil {
		return c, err
	}
	if c.Policy.IdleTimeout, err = config.Duration(getenv, "ZEN_PROVIDER_IDLE_TIMEOUT", c.Policy.IdleTimeout, time.Second, 24*time.Hour); err != nil {
		return c, err
	}
	if c.Policy.Attempts, err = config.Int(getenv, "ZEN_PROVIDER_ATTEMPTS", c.Policy.Attempts, 1, 10); err != nil {
		return c, err
	}
	openaiKey := config.String(getenv, "OPENAI_API_KEY", "")
	openaiURL := config.String(getenv, "OPENAI_BASE_URL", "https://api.openai.com/v1")
	if err := checkURL("OPENAI_BASE_URL", openaiURL); err != nil {
		return c, err
	}
	c.Providers = append(c.Providers, ProviderConfig{
		Name: "openai", Label: "OpenAI", APIKey: openaiKey, BaseURL: openaiURL,
		CatalogPath: getenv("OPENAI_MODELS_CONFIG_PATH"), Configured: openaiKey != "" && !placeholder(openaiKey),
	})
	customURL := config.String(getenv, "CUSTOM_API_URL", "")
	if customURL != "" {
		if err := checkURL("CUSTOM_API_URL", customURL); err != nil {
			return c, err
		}
	}
	customKey := config.String(getenv, "CUSTOM_API_KEY", "")
	if customKey == "" {
		customKey = customKeyless
	}
	c.Providers = append(c.Providers, ProviderConfig{
		Name: "custom", Label: "Custom API", APIKey: customKey, BaseURL: customURL,
		CatalogPath: getenv("CUSTOM_MODELS_CONFIG_PATH"), Configured: customURL != "",
	})
	return c, nil
}

// checkURL refuses base URLs that are not plain http(s) addresses.
func checkURL(key, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q: want an http or https URL such as http://localhost:11434/v1", key, raw)
	}
	return nil
}

// Server is the router role.
type Server struct{ api *grpcapi.Server }

// New loads the catalogues and builds the provider clients.
func New(c Config, logger *slog.Logger) (*Server, error) {
	hc := provider.NewHTTPClient(30 * time.Second)
	var providers []*routing.Provider
	for _, pc := range c.Providers {
		models, err := catalogue.Load(pc.Name, pc.CatalogPath)
		if err != nil {
			return nil, fmt.Errorf("%s_MODELS_CONFIG_PATH: %w", strings.ToUpper(pc.Name), err)
		}
		p := &routing.Provider{Name: pc.Name, Label: pc.Label, Configured: pc.Configured, Models: models}
		if pc.Configured {
			p.Client = provider.NewCompat(pc.Label, pc.BaseURL, pc.APIKey, hc)
		}
		providers = append(providers, p)
	}
	reg, err := routing.New(providers, c.DefaultModel)
	if err != nil {
		return nil, err
	}
	logger.Info("router ready", "providers", reg.ConfiguredProviders(), "default_model", reg.DefaultModel(), "auto_mode", reg.AutoMode())
	return &Server{api: grpcapi.New(reg, c.Policy, logger)}, nil
}

// Register adds the router service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) { routerv1.RegisterRouterServiceServer(r, s.api) }
