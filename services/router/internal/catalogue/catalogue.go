package catalogue

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

//go:embed data/*.json
var embedded embed.FS

// Model is one catalogue entry: the reference's capability fields.
type Model struct {
	Name                     string   `json:"model_name"`
	FriendlyName             string   `json:"friendly_name"`
	Aliases                  []string `json:"aliases"`
	IntelligenceScore        int      `json:"intelligence_score"`
	Description              string   `json:"description"`
	ContextWindow            int64    `json:"context_window"`
	MaxOutputTokens          int64    `json:"max_output_tokens"`
	MaxThinkingTokens        int64    `json:"max_thinking_tokens"`
	SupportsExtendedThinking bool     `json:"supports_extended_thinking"`
	SupportsSystemPrompts    bool     `json:"supports_system_prompts"`
	SupportsStreaming        bool     `json:"supports_streaming"`
	SupportsFunctionCalling  bool     `json:"supports_function_calling"`
	SupportsImages           bool     `json:"supports_images"`
	SupportsJSONMode         bool     `json:"supports_json_mode"`
	SupportsTemperature      bool     `json:"supports_temperature"`
	TemperatureConstraint    string   `json:"temperature_constraint"`
	MaxImageSizeMB           float64  `json:"max_image_size_mb"`
	UseOpenAIResponseAPI     bool     `json:"use_openai_response_api"`
	DefaultReasoningEffort   string   `json:"default_reasoning_effort"`
	AllowCodeGeneration      bool     `json:"allow_code_generation"`
	Deployment               string   `json:"deployment"`
	// Prices in US dollars per million tokens; zero when unknown.
	InputCostPerMillion  float64 `json:"input_cost_per_million_tokens"`
	OutputCostPerMillion float64 `json:"output_cost_per_million_tokens"`
}

// Cost is what a call with these token counts costs, or 0 when unpriced.
func (m Model) Cost(input, output int64) float64 {
	return (float64(input)*m.InputCostPerMillion + float64(output)*m.OutputCostPerMillion) / 1e6
}

// entry mirrors Model for decoding: pointers tell "absent" from false, so
// the reference's true defaults apply, and unknown keys are rejected.
type entry struct {
	Name                     string          `json:"model_name"`
	FriendlyName             string          `json:"friendly_name"`
	Aliases                  json.RawMessage `json:"aliases"`
	IntelligenceScore        *int            `json:"intelligence_score"`
	Description              string          `json:"description"`
	ContextWindow            int64           `json:"context_window"`
	MaxOutputTokens          int64           `json:"max_output_tokens"`
	MaxThinkingTokens        int64           `json:"max_thinking_tokens"`
	SupportsExtendedThinking bool            `json:"supports_extended_thinking"`
	SupportsSystemPrompts    *bool           `json:"supports_system_prompts"`
	SupportsStreaming        *bool           `json:"supports_streaming"`
	SupportsFunctionCalling  bool            `json:"supports_function_calling"`
	SupportsImages           bool            `json:"supports_images"`
	SupportsJSONMode         bool            `json:"supports_json_mode"`
	SupportsTemperature      *bool           `json:"supports_temperature"`
	TemperatureConstraint    string          `json:"temperature_constraint"`
	MaxImageSizeMB           float64         `json:"max_image_size_mb"`
	UseOpenAIResponseAPI     bool            `json:"use_openai_response_api"`
	DefaultReasoningEffort   string          `json:"default_reasoning_effort"`
	AllowCodeGeneration      bool            `json:"allow_code_generation"`
	Deployment               string          `json:"deployment"`
	InputCostPerMillion      float64         `json:"input_cost_per_million_tokens"`
	OutputCostPerMillion     float64         `json:"output_cost_per_million_tokens"`
	MaxTokens                json.RawMessage `json:"max_tokens"`
}

type file struct {
	README json.RawMessage   `json:"_README"`
	Models []json.RawMessage `json:"models"`
}

// Embedded returns the catalogue shipped for provider ("openai", "custom").
func Embedded(provider string) ([]Model, error) {
	data, err := embedded.ReadFile("data/" + provider + ".json")
	if err != nil {
		return nil, fmt.Errorf("no catalogue is shipped for provider %q", provider)
	}
	return Parse("embedded "+provider+".json", data)
}

// Load returns the catalogue at path when path is set, else the embedded one.
func Load(provider, path string) ([]Model, error) {
	if path == "" {
		return Embedded(provider)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model catalogue: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a catalogue; name labels errors.
func Parse(name string, data []byte) ([]Model, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w (a catalogue is {\"_README\": {...}, \"models\": [...]})", name, err)
	}
	seen := map[string]string{}
	models := make([]Model, 0, len(f.Models))
	for i, raw := range f.Models {
		m, err := parseEntry(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: models[%d]: %w", name, i, err)
		}
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			key := strings.ToLower(n)
			if other, dup := seen[key]; dup {
				return nil, fmt.Errorf("%s: models[%d] (%s): name or alias %q is already used by %s", name, i, m.Name, n, other)
			}
			seen[key] = m.Name
		}
		models = append(models, m)
	}
	return models, nil
}

func parseEntry(raw json.RawMessage) (Model, error) {
	var e entry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Model{}, err
	}
	if e.MaxTokens != nil {
		return Model{}, errors.New(`unknown key "max_tokens": use "max_output_tokens"`)
	}
	if strings.TrimSpace(e.Name) == "" {
		return Model{}, errors.New(`"model_name" is required`)
	}
	aliases, err := parseAliases(e.Aliases)
	if err != nil {
		return Model{}, fmt.Errorf("%s: %w", e.Name, err)
	}
	m := Model{
		Name: e.Name, FriendlyName: e.FriendlyName, Aliases: aliases, IntelligenceScore: 10,
		Description: e.Description, ContextWindow: e.ContextWindow, MaxOutputTokens: e.MaxOutputTokens,
		MaxThinkingTokens: e.MaxThinkingTokens, SupportsExtendedThinking: e.SupportsExtendedThinking,
		SupportsSystemPrompts: true, SupportsStreaming: true, SupportsFunctionCalling: e.SupportsFunctionCalling,
		SupportsImages: e.SupportsImages, SupportsJSONMode: e.SupportsJSONMode, SupportsTemperature: true,
		TemperatureConstraint: e.TemperatureConstraint, MaxImageSizeMB: e.MaxImageSizeMB,
		UseOpenAIResponseAPI: e.UseOpenAIResponseAPI, DefaultReasoningEffort: e.DefaultReasoningEffort,
		AllowCodeGeneration: e.AllowCodeGeneration, Deployment: e.Deployment,
		InputCostPerMillion: e.InputCostPerMillion, OutputCostPerMillion: e.OutputCostPerMillion,
	}
	if e.IntelligenceScore != nil {
		m.IntelligenceScore = *e.IntelligenceScore
	}
	setIf(&m.SupportsSystemPrompts, e.SupportsSystemPrompts)
	setIf(&m.SupportsStreaming, e.SupportsStreaming)
	setIf(&m.SupportsTemperature, e.SupportsTemperature)
	if m.TemperatureConstraint == "" {
		m.TemperatureConstraint = "range"
	}
	switch {
	case m.IntelligenceScore < 1 || m.IntelligenceScore > 20:
		return Model{}, fmt.Errorf("%s: intelligence_score %d is outside 1 to 20", m.Name, m.IntelligenceScore)
	case m.ContextWindow <= 0:
		return Model{}, fmt.Errorf("%s: context_window must be a positive number of tokens", m.Name)
	case !slices.Contains([]string{"range", "fixed", "discrete"}, m.TemperatureConstraint):
		return Model{}, fmt.Errorf("%s: temperature_constraint %q: want range, fixed or discrete", m.Name, m.TemperatureConstraint)
	case m.InputCostPerMillion < 0 || m.OutputCostPerMillion < 0:
		return Model{}, fmt.Errorf("%s: prices cannot be negative", m.Name)
	case m.DefaultReasoningEffort != "" && !slices.Contains([]string{"low", "medium", "high"}, m.DefaultReasoningEffort):
		return Model{}, fmt.Errorf("%s: default_reasoning_effort %q: want low, medium or high", m.Name, m.DefaultReasoningEffort)
	}
	return m, nil
}

func setIf(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

// parseAliases accepts a list of strings or one comma-separated string.
func parseAliases(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, errors.New(`"aliases" must be a list of strings or a comma-separated string`)
		}
		list = strings.Split(s, ",")
	}
	out := list[:0]
	for _, a := range list {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out, nil
}

// Rank orders models for auto mode and listings, 0 to 100: mostly the
// human intelligence score, nudged by context size, output room and
// capabilities, as the reference computes it.
func (m Model) Rank() int {
	score := float64(m.IntelligenceScore * 5)
	if m.ContextWindow > 0 {
		score += math.Max(0, math.Min(5, math.Log10(float64(m.ContextWindow))-3))
	}
	switch {
	case m.MaxOutputTokens >= 65_000:
		score += 2
	case m.MaxOutputTokens >= 32_000:
		score++
	}
	for _, bonus := range []struct {
		has bool
		pts float64
	}{{m.SupportsExtendedThinking, 3}, {m.SupportsFunctionCalling, 1}, {m.SupportsJSONMode, 1}, {m.SupportsImages, 1}} {
		if bonus.has {
			score += bonus.pts
		}
	}
	return int(math.Max(0, math.Min(100, score)))
}

// discreteTemperatures are the values a "discrete" model accepts.
var discreteTemperatures = []float64{0, 0.3, 0.7, 1.0, 1.5, 2.0}

// ClampTemperature returns the temperature the model accepts nearest to t.
func (m Model) ClampTemperature(t float64) float64 {
	switch m.TemperatureConstraint {
	case "fixed":
		return 1.0
	case "discrete":
		best := discreteTemperatures[0]
		for _, v := range discreteTemperatures {
			if math.Abs(v-t) < math.Abs(best-t) {
				best = v
			}
		}
		return best
	}
	return math.Max(0, math.Min(2, t))
}
