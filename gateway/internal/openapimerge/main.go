package main

import (
	"fmt"
	"os"

	"github.com/zenmcp/zen/gateway/internal/openapidoc"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: openapimerge <generated.swagger.json> <routes.swagger.json>")
		os.Exit(2)
	}
	if err := merge(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "openapimerge:", err)
		os.Exit(1)
	}
}

func merge(docPath, routesPath string) error {
	generated, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	routes, err := os.ReadFile(routesPath)
	if err != nil {
		return err
	}
	doc, err := openapidoc.Parse(generated)
	if err != nil {
		return fmt.Errorf("%s: %w", docPath, err)
	}
	if err := doc.Merge(routes); err != nil {
		return fmt.Errorf("%s into %s: %w", routesPath, docPath, err)
	}
	out, err := doc.Encode()
	if err != nil {
		return err
	}
	return os.WriteFile(docPath, out, 0o644)
}
