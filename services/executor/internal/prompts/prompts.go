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
	t, ok := texts[name]
	if !ok {
		panic(fmt.Sprintf("prompts: no prompt %q", name))
	}
	return t
}

// texts are the prompts by name, read once: every call reads several.
var texts = func() map[string]string {
	entries, err := files.ReadDir("text")
	if err != nil {
		panic(err)
	}
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		b, err := files.ReadFile("text/" + e.Name())
		if err != nil {
			panic(err)
		}
		m[strings.TrimSuffix(e.Name(), ".txt")] = strings.TrimRight(string(b), "\n")
	}
	return m
}()

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
	_, ok := texts[name]
	return ok
}
