package call

import (
	"github.com/zenmcp/zen/services/edge/internal/files"
)

// earlierFiles are the files a workflow's earlier steps named relevant
// (earlier: memory's tool_files, newest step first) that the final step's
// expert reads beside the step's own, as the reference's expert reads its
// consolidated relevant files; the budget then decides, as for the step's
// own. The paths are the thread's, which an import may have written: one
// the file policy refuses now is left out, and listed saying why, rather
// than failing the step for a file an earlier one named.
func (r *Runner) earlierFiles(earlier []string) (paths []string, left []files.Skipped) {
	for _, p := range earlier {
		if _, err := r.files.Resolve(p); err != nil {
			left = append(left, files.Skipped{Path: p, Reason: "an earlier step's file, left out: " + err.Error()})
			continue
		}
		paths = append(paths, p)
	}
	return paths, left
}
