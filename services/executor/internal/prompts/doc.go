// Package prompts holds the system prompts and fixed instruction texts the
// tools send to models, as text files embedded in the binary.
package prompts
