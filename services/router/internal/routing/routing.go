package routing

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/provider"
)

// ErrNotAvailable is a model no configured provider serves.
var ErrNotAvailable = errors.New("model not available")

// ErrNoProvider is asking for a model while no provider is configured: the
// error wraps it with the registry's setup help.
var ErrNoProvider = errors.New("no model provider is configured")

// Categories of tools for auto mode.
const (
	ExtendedReasoning = "EXTENDED_REASONING"
	FastResponse      = "FAST_RESPONSE"
	Balanced          = "BALANCED"
)

// ParseCategory accepts a category in any case; empty means BALANCED.
func ParseCategory(s string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(s))
	switch c {
	case "":
		return Balanced, nil
	case ExtendedReasoning, FastResponse, Balanced:
		return c, nil
	}
	return "", fmt.Errorf("unknown category %q: want EXTENDED_REASONING, FAST_RESPONSE or BALANCED", s)
}

// Provider is one configured or known provider.
type Provider struct {
	Name       string // openai, custom
	Label      string // how messages name it: "OpenAI", "Custom API"
	Configured bool
	Models     []catalogue.Model
	Client     provider.Generator // nil when not configured
	// Allowed limits the provider to these names or aliases (any case);
	// empty allows every model.
	Allowed []string
}

// allows tells whether the allow-list admits m.
func (p *Provider) allows(m catalogue.Model) bool {
	if len(p.Allowed) == 0 {
		return true
	}
	return slices.ContainsFunc(p.Allowed, func(a string) bool { return matches(m, a) })
}

// UnknownAllowed lists allow-list entries no model of the catalogue
// answers to.
func (p *Provider) UnknownAllowed() []string {
	var out []string
	for _, a := range p.Allowed {
		if !slices.ContainsFunc(p.Models, func(m catalogue.Model) bool { return matches(m, a) }) {
			out = append(out, a)
		}
	}
	return out
}

// Entry is a model with the provider that serves it.
type Entry struct {
	catalogue.Model
	Provider   *Provider
	Configured bool
}

// Registry resolves model names. Providers are in priority order: the first
// configured provider that knows a name serves it.
type Registry struct {
	providers    []*Provider
	defaultModel string
	setupHelp    string // how to configure a provider (WithSetupHelp)
}

// New returns a registry; defaultModel is DEFAULT_MODEL ("auto" when empty).
// With no provider configured it still answers what needs none (the
// catalogue, the settings), so zen starts and can say how to add one;
// resolving a model then fails with ErrNoProvider.
func New(providers []*Provider, defaultModel string) (*Registry, error) {
	if defaultModel == "" {
		defaultModel = "auto"
	}
	r := &Registry{providers: providers, defaultModel: defaultModel}
	if len(r.ConfiguredProviders()) == 0 {
		return r, nil
	}
	if !slices.ContainsFunc(r.Entries(), func(e Entry) bool { return e.Configured }) && !r.servesOpenRouterFreely() {
		return nil, errors.New("no models are available: the *_ALLOWED_MODELS lists leave none of the configured providers' models; check the names against listmodels or GET /v1/models")
	}
	return r, nil
}

// WithSetupHelp sets what the registry tells a caller asking for a model
// while no provider is configured: which variables to set, and where.
func (r *Registry) WithSetupHelp(help string) *Registry {
	r.setupHelp = help
	return r
}

// SetupHelp says that no provider is configured and how to configure one,
// or is "" once one is.
func (r *Registry) SetupHelp() string {
	if err := r.noProvider(); err != nil {
		return err.Error()
	}
	return ""
}

// noProvider is ErrNoProvider with the setup help while no provider is
// configured, else nil.
func (r *Registry) noProvider() error {
	switch {
	case len(r.ConfiguredProviders()) > 0:
		return nil
	case r.setupHelp == "":
		return ErrNoProvider
	}
	return fmt.Errorf("%w: %s", ErrNoProvider, r.setupHelp)
}

// DefaultModel is DEFAULT_MODEL as configured.
func (r *Registry) DefaultModel() string { return r.defaultModel }

// AutoMode reports whether callers must name a model: DEFAULT_MODEL is auto
// or names a model no configured provider serves.
func (r *Registry) AutoMode() bool {
	if strings.EqualFold(r.defaultModel, "auto") {
		return true
	}
	_, err := r.lookup(r.defaultModel)
	return err != nil
}

// ConfiguredProviders lists configured providers in priority order.
func (r *Registry) ConfiguredProviders() []string {
	var out []string
	for _, p := range r.providers {
		if p.Configured {
			out = append(out, p.Name)
		}
	}
	return out
}

// Entries lists every known model in priority order; Configured is true
// for those a configured provider serves and its allow-list admits.
func (r *Registry) Entries() []Entry {
	var out []Entry
	for _, p := range r.providers {
		for _, m := range p.Models {
			out = append(out, Entry{Model: m, Provider: p, Configured: p.Configured && p.allows(m)})
		}
	}
	return out
}

// servesOpenRouterFreely is true when OpenRouter is configured with no
// allow-list: it then serves any vendor/model, catalogued or not.
func (r *Registry) servesOpenRouterFreely() bool {
	for _, p := range r.providers {
		if p.Name == "openrouter" && p.Configured && len(p.Allowed) == 0 {
			return true
		}
	}
	return false
}

// Lookup finds a model by canonical name or alias, case-insensitively, in
// any provider's catalogue, configured or not.
func (r *Registry) Lookup(name string) (Entry, bool) {
	for _, e := range r.Entries() {
		if matches(e.Model, name) {
			return e, true
		}
	}
	return Entry{}, false
}

func matches(m catalogue.Model, name string) bool {
	if strings.EqualFold(m.Name, name) {
		return true
	}
	return slices.ContainsFunc(m.Aliases, func(a string) bool { return strings.EqualFold(a, name) })
}

// lookup finds a configured provider's allowed model by name, alias, a
// Custom model:tag whose model is known, or an uncatalogued vendor/model
// on OpenRouter (with generic capabilities).
func (r *Registry) lookup(name string) (Entry, error) {
	for _, p := range r.providers {
		if !p.Configured {
			continue
		}
		for _, m := range p.Models {
			if !p.allows(m) {
				continue
			}
			if matches(m, name) {
				return Entry{Model: m, Provider: p, Configured: true}, nil
			}
			if base, _, tagged := strings.Cut(name, ":"); tagged && p.Name == "custom" && matches(m, base) {
				return Entry{Model: m, Provider: p, Configured: true}, nil
			}
		}
	}
	for _, p := range r.providers {
		if p.Name == "openrouter" && p.Configured && strings.Contains(name, "/") && !strings.HasPrefix(name, "http") {
			m := genericOpenRouterModel(name)
			if p.allows(m) {
				return Entry{Model: m, Provider: p, Configured: true}, nil
			}
		}
	}
	return Entry{}, fmt.Errorf("%w: %s", ErrNotAvailable, name)
}

// genericOpenRouterModel describes a vendor/model OpenRouter serves that the
// catalogue does not list, as the reference does.
func genericOpenRouterModel(name string) catalogue.Model {
	return catalogue.Model{Name: name, FriendlyName: "OpenRouter (" + name + ")", IntelligenceScore: 9,
		Description: "not in the catalogue: generic capabilities", ContextWindow: 32_768, MaxOutputTokens: 32_768,
		SupportsSystemPrompts: true, SupportsStreaming: true, SupportsTemperature: true, TemperatureConstraint: "range"}
}

// Resolve turns name into a served model for a tool of the given category,
// and says why it chose it.
func (r *Registry) Resolve(name, category string) (Entry, string, error) {
	if err := r.noProvider(); err != nil {
		return Entry{}, "", err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		if r.AutoMode() {
			return r.auto(category, "no model was named and DEFAULT_MODEL="+r.defaultModel+" is not served, so auto mode picks")
		}
		e, err := r.lookup(r.defaultModel)
		return e, fmt.Sprintf("no model was named; DEFAULT_MODEL is %s (%s)", r.defaultModel, e.Provider.Name), err
	}
	if strings.EqualFold(name, "auto") {
		return r.auto(category, "auto mode picks")
	}
	e, err := r.lookup(name)
	if err != nil {
		return Entry{}, "", err
	}
	if strings.EqualFold(e.Name, name) {
		return e, fmt.Sprintf("%s is served by %s", e.Name, e.Provider.Name), nil
	}
	return e, fmt.Sprintf("%s is an alias of %s, served by %s", name, e.Name, e.Provider.Name), nil
}

// auto picks for a tool category, by rank (mostly the intelligence
// score), never by name: extended reasoning prefers models that think;
// fast response prefers the light models (flash, mini, nano, haiku, lite,
// fast) when a configured provider has one; balanced takes the best.
// Rank ties go to the higher intelligence score, then provider priority.
func (r *Registry) auto(category, why string) (Entry, string, error) {
	cat, err := ParseCategory(category)
	if err != nil {
		return Entry{}, "", err
	}
	var candidates []Entry
	for _, e := range r.Entries() {
		if e.Configured {
			candidates = append(candidates, e)
		}
	}
	if len(candidates) == 0 {
		return Entry{}, "", fmt.Errorf("%w: no configured provider serves a model auto mode can use", ErrNotAvailable)
	}
	if cat == FastResponse {
		if light := slices.DeleteFunc(slices.Clone(candidates), func(e Entry) bool { return !isLight(e.Name) }); len(light) > 0 {
			candidates = light
		}
	}
	best := slices.MaxFunc(candidates, func(a, b Entry) int {
		if cat == ExtendedReasoning && a.SupportsExtendedThinking != b.SupportsExtendedThinking {
			if a.SupportsExtendedThinking {
				return 1
			}
			return -1
		}
		// The rank is capped at 100, so at the top the score decides.
		return cmp.Or(cmp.Compare(a.Rank(), b.Rank()), cmp.Compare(a.IntelligenceScore, b.IntelligenceScore))
	})
	return best, fmt.Sprintf("%s %s for %s: the highest-ranked model (rank %d) of %s", why, best.Name, cat, best.Rank(), strings.Join(r.ConfiguredProviders(), ", ")), nil
}

// isLight tells the small, quick models by the words of their names
// (gpt-5-mini, gemini-2.5-flash; not gemini-3-pro).
func isLight(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return strings.ContainsRune("-_./: ", r) })
	return slices.ContainsFunc(words, func(w string) bool {
		return slices.Contains([]string{"flash", "mini", "nano", "haiku", "lite", "fast"}, w)
	})
}

// Alternatives lists the same model at other configured providers, in
// priority order, for fallback: names match without a vendor prefix, so
// OpenAI's gpt-5 and OpenRouter's openai/gpt-5 are one model.
func (r *Registry) Alternatives(e Entry) []Entry {
	want := map[string]bool{bare(e.Name): true}
	var out []Entry
	for _, p := range r.providers {
		if !p.Configured || p == e.Provider {
			continue
		}
		for _, m := range p.Models {
			if want[bare(m.Name)] {
				out = append(out, Entry{Model: m, Provider: p, Configured: true})
				break
			}
		}
	}
	return out
}

// bare drops a vendor prefix and lowercases a model name.
func bare(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return strings.ToLower(name)
}
