package catalogue

import (
	"strings"
	"testing"
)

func TestEmbeddedCataloguesLoad(t *testing.T) {
	for _, p := range []string{"openai", "custom", "gemini", "xai", "dial", "openrouter", "azure"} {
		models, err := Embedded(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(models) == 0 && p != "azure" {
			t.Fatalf("%s: no models", p)
		}
	}
	custom, _ := Embedded("custom")
	if custom[0].Name != "llama3.2" || !custom[0].SupportsStreaming || !custom[0].SupportsTemperature || custom[0].TemperatureConstraint != "range" {
		t.Errorf("llama3.2 = %+v, want defaults applied", custom[0])
	}
}

func TestParseRejectsBadCatalogues(t *testing.T) {
	tests := []struct {
		name, json, wantErr string
	}{
		{"unknown key", `{"models":[{"model_name":"a","context_window":1,"colour":"red"}]}`, `unknown field "colour"`},
		{"max_tokens", `{"models":[{"model_name":"a","context_window":1,"max_tokens":5}]}`, `use "max_output_tokens"`},
		{"duplicate alias", `{"models":[{"model_name":"a","context_window":1,"aliases":["x"]},{"model_name":"b","context_window":1,"aliases":["X"]}]}`, `"X" is already used by a`},
		{"score", `{"models":[{"model_name":"a","context_window":1,"intelligence_score":30}]}`, "outside 1 to 20"},
		{"top-level key", `{"modles":[]}`, `unknown field "modles"`},
		{"no name", `{"models":[{"context_window":1}]}`, `"model_name" is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("test.json", []byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "test.json") {
				t.Errorf("err = %v, want one naming test.json and containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestAliasesAcceptACommaString(t *testing.T) {
	models, err := Parse("t", []byte(`{"models":[{"model_name":"a","context_window":1,"aliases":" x, y ,"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(models[0].Aliases, "|"); got != "x|y" {
		t.Errorf("aliases = %q, want x|y", got)
	}
}

func TestClampTemperature(t *testing.T) {
	tests := []struct {
		constraint string
		in, want   float64
	}{
		{"range", 3, 2}, {"range", -1, 0}, {"range", 0.4, 0.4}, {"fixed", 0.2, 1}, {"discrete", 0.6, 0.7}, {"discrete", 1.9, 2},
	}
	for _, tt := range tests {
		if got := (Model{TemperatureConstraint: tt.constraint}).ClampTemperature(tt.in); got != tt.want {
			t.Errorf("%s %v: got %v, want %v", tt.constraint, tt.in, got, tt.want)
		}
	}
}
