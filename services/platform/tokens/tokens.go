package tokens

// Estimate returns the estimated token cost of s: 3.3 bytes a token,
// rounded up. Measured against o200k_base on code and prose (see
// docs/TOKENS.md and TestEstimateCalibration), it errs a little high for
// most text, which keeps budgets from being overrun.
func Estimate(s string) int64 {
	return EstimateBytes(int64(len(s)))
}

// EstimateBytes is Estimate for text of n bytes, before it is read: what a
// file of that size will cost.
func EstimateBytes(n int64) int64 {
	return (n*10 + 32) / 33
}

// BytesWithin is the most bytes of text whose estimate stays within n
// tokens: the inverse of EstimateBytes.
func BytesWithin(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return n * 33 / 10
}

// Budget is how a model's context window is shared out.
type Budget struct {
	Content  int64 // everything we send: prompt, history and files
	Response int64 // room left for the reply
	Files    int64 // of Content, for embedded files
	History  int64 // of Content, for conversation history
}

// largeContext is where the reference server moves from a 60/40 to an 80/20
// split between content and response.
const largeContext = 300_000

// ForContext splits a context window the way the reference server does.
func ForContext(window int64) Budget {
	if window <= 0 {
		window = 8192
	}
	if window < largeContext {
		content := window * 60 / 100
		return Budget{Content: content, Response: window - content, Files: content * 30 / 100, History: content * 50 / 100}
	}
	content := window * 80 / 100
	return Budget{Content: content, Response: window - content, Files: content * 40 / 100, History: content * 40 / 100}
}
