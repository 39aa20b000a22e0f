package prompts

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed text/*.txt
var files embed.FS

// Text returns the named prompt (the file name without .txt). The set is
// fixed at build time, so a missing name is a programming error caught by
// the package tests.
func Text(name string) string {
	b, err := files.ReadFile("text/" + name + ".txt")
	if err != nil {
		panic(fmt.Sprintf("prompts: no prompt %q", name))
	}
	return strings.TrimRight(string(b), "\n")
}

// System returns a tool's system prompt, with the LOCALE line first when a
// locale is set.
func System(name, locale string) string {
	p := Text(name)
	if locale != "" {
		return "Always respond in " + locale + ".\n\n" + p
	}
	return p
}

// Has tells whether a prompt of that name is built in.
func Has(name string) bool {
	_, err := files.ReadFile("text/" + name + ".txt")
	return err == nil
}
