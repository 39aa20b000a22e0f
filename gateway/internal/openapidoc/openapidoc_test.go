package openapidoc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const generated = `{
  "swagger": "2.0",
  "info": {
    "title": "zen gateway",
    "version": "0.0.0"
  },
  "tags": [
    {
      "name": "MemoryService"
    }
  ],
  "paths": {
    "/v1/threads": {
      "get": {
        "responses": {
          "default": {
            "schema": {
              "$ref": "#/definitions/rpcStatus"
            }
          }
        }
      }
    }
  },
  "definitions": {
    "rpcStatus": {
      "type": "object"
    }
  }
}
`

func TestMergeKeepsTheGeneratorsLayout(t *testing.T) {
	t.Parallel()
	d, err := Parse([]byte(generated))
	if err != nil {
		t.Fatal(err)
	}
	err = d.Merge([]byte(`{"tags": [{"name": "Gateway"}], "paths": {"/healthz": {"get": {"summary": "a <probe>"}}},
		"definitions": {"gatewayHealth": {"type": "object"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetVersion("v1.2.3"); err != nil {
		t.Fatal(err)
	}
	got, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(`"version": "0.0.0"`, `"version": "v1.2.3"`,
		`      "name": "MemoryService"
    }
`, `      "name": "MemoryService"
    },
    {
      "name": "Gateway"
    }
`, `  "paths": {
`, `  "paths": {
    "/healthz": {
      "get": {
        "summary": "a \u003cprobe\u003e"
      }
    },
`, `  "definitions": {
`, `  "definitions": {
    "gatewayHealth": {
      "type": "object"
    },
`).Replace(generated)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("merged document (-want +got):\n%s", diff)
	}
}

func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, fragment, wantErr string }{
		{"a generated path", `{"paths": {"/v1/threads": {}}}`, `paths "/v1/threads" is also generated`},
		{"a generated definition", `{"definitions": {"rpcStatus": {}}}`, `definitions "rpcStatus" is also generated`},
		{"a generated tag", `{"tags": [{"name": "MemoryService"}]}`, `tag "MemoryService" is also generated`},
		{"a reference to nothing", `{"paths": {"/healthz": {"get": {"schema": {"$ref": "#/definitions/nope"}}}}}`,
			"#/definitions/nope is referenced but not defined"},
		{"document-level members", `{"info": {"title": "mine"}}`, "only paths, definitions and tags"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := Parse([]byte(generated))
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Merge([]byte(tt.fragment)); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Merge(%s) = %v, want an error with %q", tt.fragment, err, tt.wantErr)
			}
		})
	}
}
