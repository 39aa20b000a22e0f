package call

import (
	"fmt"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/tokens"
)

// readFiles reads the files a call names within the model's file budget,
// deciding on sizes before reading anything: a large directory once cost
// gigabytes read only to be refused. Files found in directories stop at the
// budget, and what was left out is returned for the reply to mention. Files
// named outright are refused together (code_too_large) when they do not
// fit, as the reference does.
func (r *Runner) readFiles(tool string, model *routerv1.Model,
	paths []string) ([]files.File, files.Omitted, *Outcome) {
	limit := fileLimit(model)
	exp, err := r.files.ExpandWithin(paths, tokens.BytesWithin(limit))
	if err != nil {
		return nil, files.Omitted{}, ptr(toolError(tool, "Error: "+err.Error(), nil))
	}
	if total := tokens.EstimateBytes(exp.Bytes); total > limit {
		return nil, files.Omitted{}, codeTooLarge(tool, model, total, len(exp.Paths))
	}
	read, err := r.files.ReadAll(exp.Paths)
	if err != nil {
		return nil, files.Omitted{}, ptr(toolError(tool, "Error: "+err.Error(), nil))
	}
	// The sizes said these fit; the text read (line endings normalised,
	// bad UTF-8 replaced) is checked again.
	if out := checkCodeSize(tool, model, read); out != nil {
		return nil, files.Omitted{}, out
	}
	return read, exp.Omitted, nil
}

// noteOmitted tells the agent, in the reply's metadata, which files of the
// directories it named were left out, and what to do about it.
func noteOmitted(out *reply.Reply, model *routerv1.Model, left files.Omitted) {
	if left.Files == 0 {
		return
	}
	count := fmt.Sprint(left.Files)
	if left.AtLeast {
		count = "at least " + count
	}
	name := model.GetName()
	if name == "" {
		name = "the model"
	}
	out.Metadata.FilesOmitted = &reply.Omitted{
		Count: left.Files, Bytes: left.Bytes,
		Note: fmt.Sprintf("%s files found in the directories named (%d bytes) were left out: they did not fit in "+
			"%s's file budget of about %d tokens, or were over %d bytes each. Name the files or smaller "+
			"directories that matter most, or pick a model with a larger context window.", count, left.Bytes, name,
			fileLimit(model), files.MaxFileBytes),
	}
}
