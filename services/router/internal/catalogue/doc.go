// Package catalogue loads the JSON model catalogues, one per provider,
// embedded in the binary or replaced by <PROVIDER>_MODELS_CONFIG_PATH, and
// validates them: unknown keys, duplicate aliases and bad values are errors
// that name the file and the entry.
package catalogue
