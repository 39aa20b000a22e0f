package files

import (
	"path/filepath"
	"slices"
	"strings"
)

// systemDirs are denied with everything below them: the system's
// configuration and programs, and the kernel's and runtime's views of the
// process (/proc/self/environ holds zen's own environment).
var systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/var", "/root", "/boot", "/proc", "/sys",
	"/dev", "/run", "/private/etc", "/private/var"}

// homeParents hold home directories: the parent itself and each direct
// child (a whole home) are denied; deeper paths are a project's.
var homeParents = []string{"/home", "/Users"}

// secretDirs hold keys and credentials. They are denied wherever they sit,
// not only in the home directory: a copy in a project is just as secret.
var secretDirs = [][]string{
	{".ssh"}, {".gnupg"}, {".aws"}, {".azure"}, {".kube"}, {".config", "gcloud"}, {".docker", "config.json"},
}

// secretFiles are credential files and private keys, by name.
var secretFiles = []string{".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"}

// envTemplates are .env variants meant to be committed, with placeholders
// instead of values; every other .env file is taken to hold secrets.
var envTemplates = []string{".env.example", ".env.sample", ".env.template", ".env.dist"}

// denied says why a resolved path may never be read, or "".
func (p Policy) denied(path string) string {
	if path == "/" || filepath.VolumeName(path)+`\` == path {
		return "is the filesystem root"
	}
	for _, d := range systemDirs {
		if within(path, d) {
			return "is a system directory"
		}
	}
	for _, parent := range homeParents {
		if path == parent || filepath.Dir(path) == parent {
			return "is a home directory root"
		}
	}
	if p.home != "" && filepath.Clean(p.home) == path {
		return "is your home directory root"
	}
	for _, o := range p.own {
		if within(path, o) {
			return "is one of the files zen reads its own configuration or secrets from"
		}
	}
	return secretReason(path)
}

// secretReason says why a path names keys or credentials, or "".
func secretReason(path string) string {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := range parts {
		for _, d := range secretDirs {
			if i+len(d) <= len(parts) && slices.Equal(parts[i:i+len(d)], d) {
				return "is in " + strings.Join(d, "/") + ", which holds keys and credentials"
			}
		}
	}
	base := filepath.Base(path)
	if slices.Contains(secretFiles, base) {
		return "is " + base + ", a credentials file"
	}
	if (base == ".env" || strings.HasPrefix(base, ".env.")) && !slices.Contains(envTemplates, base) {
		return "is a .env file, which holds secrets"
	}
	return ""
}
