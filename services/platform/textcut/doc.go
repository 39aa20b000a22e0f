// Package textcut owns how zen cuts what it quotes of a caller's text (a
// refusal, a log line, a name): at a byte bound, never within a character.
package textcut
