package gateway

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/serve"
)

// schema is the part of an OpenAPI 2.0 schema that says what a value is.
type schema struct {
	Type       string             `json:"type,omitempty"`
	Format     string             `json:"format,omitempty"`
	Ref        string             `json:"$ref,omitempty"`
	Items      *schema            `json:"items,omitempty"`
	Properties map[string]*schema `json:"properties,omitempty"`
}

// answerTypes are the Go types the gateway's own routes encode, each
// described in routes.swagger.json as "gateway" + its name.
var answerTypes = []reflect.Type{
	reflect.TypeFor[browsePage](), reflect.TypeFor[threadRow](), reflect.TypeFor[threadView](),
	reflect.TypeFor[turnView](), reflect.TypeFor[turnFile](), reflect.TypeFor[fileView](),
	reflect.TypeFor[stepView](), reflect.TypeFor[threadLink](), reflect.TypeFor[threadSummary](),
	reflect.TypeFor[threadHistory](), reflect.TypeFor[importResult](), reflect.TypeFor[serve.Health](),
}

// definitionName is what routes.swagger.json calls a Go type's schema.
func definitionName(t reflect.Type) string {
	return "gateway" + strings.ToUpper(t.Name()[:1]) + t.Name()[1:]
}

// TestOpenAPISchemasMatchTheGoTypes: routes.swagger.json is written by
// hand. Each of its gateway definitions must hold exactly the JSON fields
// the Go type it describes encodes, with the type and format of each, so
// that a field added, renamed or retyped in Go cannot leave the document
// behind. (make gen copies the document into gateway/openapi.)
func TestOpenAPISchemasMatchTheGoTypes(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("routes.swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions map[string]*schema `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// serve.ReadyHandler (platform) answers readiness from a map: no Go
	// type to hold the definition to.
	described := map[string]bool{"gatewayReadiness": true}
	for _, typ := range answerTypes {
		name := definitionName(typ)
		described[name] = true
		def, ok := doc.Definitions[name]
		if !ok {
			t.Errorf("routes.swagger.json has no definition %s for %s", name, typ)
			continue
		}
		got := map[string]*schema{}
		for prop, s := range def.Properties {
			// A nested object's own properties are for readers; its kind is what must match.
			got[prop] = &schema{Type: s.Type, Format: s.Format, Ref: s.Ref, Items: s.Items}
		}
		if diff := cmp.Diff(schemaOf(t, typ).Properties, got); diff != "" {
			t.Errorf("definitions.%s in routes.swagger.json does not match %s (-Go +document):\n%s", name, typ, diff)
		}
	}
	for name := range doc.Definitions {
		if strings.HasPrefix(name, "gateway") && !described[name] {
			t.Errorf("routes.swagger.json defines %s, which no type in answerTypes is", name)
		}
	}
}

// schemaOf is the schema encoding/json gives values of t.
func schemaOf(t *testing.T, typ reflect.Type) *schema {
	t.Helper()
	switch {
	case typ == reflect.TypeFor[time.Time]():
		return &schema{Type: "string", Format: "date-time"}
	case typ == reflect.TypeFor[rawJSON]():
		return &schema{Type: "object"}
	}
	switch typ.Kind() {
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int32:
		return &schema{Type: "integer", Format: "int32"}
	case reflect.Int64:
		return &schema{Type: "integer", Format: "int64"}
	case reflect.Float64:
		return &schema{Type: "number", Format: "double"}
	case reflect.Pointer:
		return schemaOf(t, typ.Elem())
	case reflect.Slice:
		return &schema{Type: "array", Items: schemaOf(t, typ.Elem())}
	case reflect.Struct:
		props := map[string]*schema{}
		addFields(t, typ, props)
		return &schema{Type: "object", Properties: props}
	}
	t.Fatalf("%s: no OpenAPI schema for a %s; use a type with a fixed size (int32, int64, float64)", typ, typ.Kind())
	return nil
}

// addFields adds the JSON fields of struct type typ, those of embedded
// structs among them, as encoding/json does.
func addFields(t *testing.T, typ reflect.Type, props map[string]*schema) {
	t.Helper()
	for f := range typ.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			addFields(t, f.Type, props)
		case !f.IsExported():
		case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == typ.PkgPath() ||
			f.Type.Kind() == reflect.Pointer && f.Type.Elem().PkgPath() == typ.PkgPath():
			props[jsonName(f, tag)] = &schema{Ref: "#/definitions/" + definitionName(deref(f.Type))}
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct &&
			f.Type.Elem().PkgPath() == typ.PkgPath():
			props[jsonName(f, tag)] = &schema{Type: "array",
				Items: &schema{Ref: "#/definitions/" + definitionName(f.Type.Elem())}}
		default:
			props[jsonName(f, tag)] = schemaOf(t, f.Type)
		}
	}
}

func jsonName(f reflect.StructField, tag string) string {
	if tag != "" {
		return tag
	}
	return f.Name
}

func deref(typ reflect.Type) reflect.Type {
	if typ.Kind() == reflect.Pointer {
		return typ.Elem()
	}
	return typ
}
