// Package render turns a conversation's selected turns and files into the
// text a model reads: the history block of a continued call and embedded
// files with line numbers.
package render
