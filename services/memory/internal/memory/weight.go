package memory

import "fmt"

// MaxThreadWeight bounds what one thread holds, weighed as its readers pay
// for it: the bytes of its text, names and stored values as the stores
// write them (Encode), and ValueWeight more for each value (each map, list,
// string and number, each turn and file). A read of a thread decodes it
// whole, and memory, the edge and the gateway each hold it: without a
// bound, 50 turns of workflow states as wide as MaxValues let took one read
// 0.9 GB. Zen's own threads weigh from kilobytes to a few megabytes: 50
// turns of 60 KB prompts and 250 KB answers weigh 8 MB.
const MaxThreadWeight int64 = 32 << 20

// ValueWeight is what one value adds to a thread's weight: decoded, a
// number or a map entry costs a reader about as much as a hundred bytes of
// text.
const ValueWeight = 100

// turnWeight is what turn t weighs but for its workflow state and model
// metadata, which jsonWithin weighs as it checks them.
func turnWeight(t Turn) int64 {
	n := jsonTextLen(t.Content) + jsonTextLen(t.ToolName) + jsonTextLen(t.ModelName) +
		jsonTextLen(t.ModelProvider) + ValueWeight
	for _, img := range t.Images {
		n += jsonTextLen(img) + ValueWeight
	}
	for _, f := range t.Files {
		n += jsonTextLen(f.Path) + jsonTextLen(f.SHA256) + ValueWeight
	}
	return n
}

// weighed says how a thread is weighed, for the errors that name its bound.
var weighed = fmt.Sprintf("the %d MiB one thread may hold (its text, and its stored values counted at %d bytes "+
	"each)", MaxThreadWeight>>20, ValueWeight)

// tooHeavy is the error of a thread written whole (created or imported)
// that weighs weight, past MaxThreadWeight.
func tooHeavy(weight int64) error {
	return fmt.Errorf("%w: the thread weighs %s, past %s: split it into threads", ErrInvalid, InUnits(weight), weighed)
}

// noRoom is the error of an exchange of weight that its thread has no
// room left for.
func noRoom(weight int64) error {
	return fmt.Errorf("%w: this exchange (%s) does not fit in what is left of %s: start a new "+
		"conversation, which may begin with a summary of this one", ErrThreadFull, InUnits(weight), weighed)
}

// InUnits says n bytes in KiB or MiB, as memory's refusals do.
func InUnits(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
