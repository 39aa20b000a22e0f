// Package server is what the zen binary wires to run the router role: its
// configuration and its gRPC registration.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/dispatch"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
	"google.golang.org/grpc"
)

// ServiceName is the gRPC service this role serves, for health checks.
const ServiceName = "zen.router.v1.RouterService"

// Config is the router role's configuration.
type Config struct {
	Providers    []ProviderConfig // priority order
	DefaultModel string           // DEFAULT_MODEL
	// ZEN_PROVIDER_TIMEOUT, ZEN_PROVIDER_IDLE_TIMEOUT (else CUSTOM_READ_TIMEOUT), ZEN_PROVIDER_ATTEMPTS
	Policy dispatch.Policy
	HTTP   HTTPTimeouts // CUSTOM_CONNECT_TIMEOUT, CUSTOM_POOL_TIMEOUT, CUSTOM_WRITE_TIMEOUT
	// MaxIdleConns is how many idle connections are kept for each provider
	// host (ZEN_PROVIDER_MAX_IDLE_CONNS): at least the calls served at once.
	MaxIdleConns int
	// EnvFiles are the .env files this process reads, in precedence order,
	// named when no provider is configured (the binary sets them). The
	// startup log gives their paths; clients see them only with
	// ShowEnvFiles.
	EnvFiles []string
	// ShowEnvFiles lets the router's clients (listmodels, a tool's error)
	// see EnvFiles' absolute paths: set by the binary for one person's
	// own server alone. Otherwise, and always in health's reason, which
	// needs no token, the files are described without their paths.
	ShowEnvFiles bool
}

// Load reads the configuration; errors name the bad variable.
func Load(getenv config.Getenv) (Config, error) {
	c := Config{DefaultModel: config.String(getenv, "DEFAULT_MODEL", "auto"), Policy: dispatch.DefaultPolicy}
	var err error
	if c.Policy.Deadline, err = config.Duration(getenv, "ZEN_PROVIDER_TIMEOUT", c.Policy.Deadline, time.Second, 24*time.Hour); err != nil {
		return c, err
	}
	if err = loadTimeouts(getenv, &c); err != nil {
		return c, err
	}
	if c.Policy.Attempts, err = config.Int(getenv, "ZEN_PROVIDER_ATTEMPTS", c.Policy.Attempts, 1, 10); err != nil {
		return c, err
	}
	if c.MaxIdleConns, err = config.Int(getenv, "ZEN_PROVIDER_MAX_IDLE_CONNS", provider.DefaultMaxIdleConnsPerHost,
		1, 100_000); err != nil {
		return c, err
	}
	for _, sp := range specs {
		pc, err := loadProvider(getenv, sp)
		if err != nil {
			return c, err
		}
		c.Providers = append(c.Providers, pc)
	}
	return c, nil
}

// Server is the router role.
type Server struct {
	api      *grpcapi.Server
	notReady string // why the router cannot call models; "" when it can
}

// New loads the catalogues and builds the provider clients.
func New(c Config, logger *slog.Logger) (*Server, error) {
	hc := provider.NewHTTPClientWith(provider.HTTPOptions{Connect: c.HTTP.Connect, MaxIdleConnsPerHost: c.MaxIdleConns})
	hc = provider.WithPhaseTimeouts(hc, c.HTTP.Pool, c.HTTP.Write)
	var providers []*routing.Provider
	for _, pc := range c.Providers {
		models, err := catalogue.Load(pc.Name, pc.CatalogPath)
		if err != nil {
			return nil, fmt.Errorf("%s_MODELS_CONFIG_PATH: %w", strings.ToUpper(pc.Name), err)
		}
		p := &routing.Provider{Name: pc.Name, Label: pc.Label, Configured: pc.Configured, Models: models, Allowed: pc.Allowed}
		if pc.Name == "azure" && len(models) == 0 {
			if pc.Configured {
				logger.Warn("Azure OpenAI has a key and endpoint but no deployments; list them with AZURE_MODELS_CONFIG_PATH")
			}
			p.Configured = false
		}
		if p.Configured {
			if p.Client, err = newClient(pc, models, hc); err != nil {
				return nil, err
			}
		}
		for _, unknown := range p.UnknownAllowed() {
			logger.Warn("allow-list names a model the catalogue does not have", "provider", pc.Name, "model", unknown)
		}
		providers = append(providers, p)
	}
	reg, err := routing.New(providers, c.DefaultModel)
	if err != nil {
		return nil, err
	}
	full, general := setupHelp(c.EnvFiles), setupHelp(nil)
	if c.ShowEnvFiles {
		reg.WithSetupHelp(full)
	} else {
		reg.WithSetupHelp(general)
	}
	notReady := ""
	if len(reg.ConfiguredProviders()) == 0 {
		notReady = fmt.Sprintf("%v: %s", routing.ErrNoProvider, general)
		// zen still starts: the agent's tools/list, listmodels and version
		// work, and say the same to whoever cannot see this log.
		logger.Warn("router has no model provider: tools that call a model will fail until one is configured",
			"help", full)
	} else {
		logger.Info("router ready", "providers", reg.ConfiguredProviders(), "default_model", reg.DefaultModel(),
			"auto_mode", reg.AutoMode())
	}
	return &Server{api: grpcapi.New(reg, c.Policy, logger, telemetry.NewInstruments()), notReady: notReady}, nil
}

// NotReady says why the router cannot call models (no provider is
// configured, and how to configure one), or is "" when it can. The binary
// reports the router's gRPC health NOT_SERVING with this reason, the
// process still serving: only a change of configuration helps. Health
// needs no token, so the reason describes the .env files without their
// paths.
func (s *Server) NotReady() string { return s.notReady }

// Register adds the router service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) { routerv1.RegisterRouterServiceServer(r, s.api) }

// newClient builds the client a provider's wire format needs.
func newClient(pc ProviderConfig, models []catalogue.Model, hc *http.Client) (provider.Generator, error) {
	switch pc.Kind {
	case "gemini":
		return provider.NewGemini(context.Background(), pc.BaseURL, pc.APIKey, hc)
	case "azure":
		deployments := map[string]string{}
		for _, m := range models {
			if m.Deployment != "" {
				deployments[m.Name] = m.Deployment
			}
		}
		return provider.NewCompatWith(pc.Label, pc.BaseURL, pc.APIKey, hc, provider.CompatOptions{
			APIVersion: pc.APIVersion,
			Deployment: func(model string) string {
				if d, ok := deployments[model]; ok {
					return d
				}
				return model // DIAL: the model name is the deployment
			},
		}), nil
	}
	return provider.NewCompatWith(pc.Label, pc.BaseURL, pc.APIKey, hc, provider.CompatOptions{Headers: pc.Headers, OmitStore: pc.Name == "openrouter"}), nil
}
