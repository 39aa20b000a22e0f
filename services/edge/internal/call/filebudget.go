package call

import (
	"fmt"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/tokens"
)

// fileSet is what a call's paths gave: the files read, and those left out.
type fileSet struct {
	read []files.File
	// omitted are files of named directories past the budget; skipped are
	// files named outright that the call goes on without.
	omitted files.Omitted
	skipped []files.Skipped
}

// readFiles reads the files a call names within the model's file budget,
// deciding on sizes before reading anything: a large directory once cost
// gigabytes read only to be refused. Files found in directories stop at the
// budget, and what was left out is returned for the reply to mention; so
// are files named outright that are missing, unreadable or over the size
// for one file: the call goes on without them. Past the budget, a simple
// tool's files named outright are refused together (code_too_large), as the
// reference does; a workflow (newestFirst: its final step, or a consensus
// step) goes on with the newest that fit.
func (r *Runner) readFiles(tool string, model *routerv1.Model, paths []string, newestFirst bool) (fileSet, *Outcome) {
	limit := fileLimit(model)
	named := files.AllNamed
	if newestFirst {
		named = files.NewestFirst
	}
	exp, err := r.files.ExpandWithin(paths, tokens.BytesWithin(limit), named)
	if err != nil {
		return fileSet{}, ptr(toolError(tool, "Error: "+err.Error(), nil))
	}
	if total := tokens.EstimateBytes(exp.Bytes); total > limit && !newestFirst {
		return fileSet{}, codeTooLarge(tool, model, total, len(exp.Paths))
	}
	read, skipped, err := r.files.ReadEach(exp)
	if err != nil {
		return fileSet{}, ptr(toolError(tool, "Error: "+err.Error(), nil))
	}
	set := fileSet{read: read, omitted: exp.Omitted, skipped: append(exp.Skipped, skipped...)}
	// The sizes said these fit; the text read (line endings normalised,
	// bad UTF-8 replaced) is checked again.
	if !newestFirst {
		if out := checkCodeSize(tool, model, read); out != nil {
			return fileSet{}, out
		}
		return set, nil
	}
	// A file that no longer fits is left out and the next tried, as
	// ExpandWithin does: one named outright is listed under the path the
	// call gave, one found in a directory counted with the directories'.
	var total int64
	kept := set.read[:0]
	for _, f := range set.read {
		if total+f.Tokens() <= limit {
			total += f.Tokens()
			kept = append(kept, f)
			continue
		}
		if label, outright := exp.Labels[f.Path]; outright {
			set.skipped = append(set.skipped, files.Skipped{Path: label, Reason: files.ReasonOverBudget})
		} else {
			set.omitted.Files++
			set.omitted.Bytes += f.Size
		}
	}
	set.read = kept
	return set, nil
}

// maxSkippedListed bounds the files a call goes without that are listed,
// each by the path the call gave; the last listed counts the rest.
const maxSkippedListed = 50

// skippedFiles are the files a call goes without, as the executor tells
// the model and the reply the agent: the first maxSkippedListed, the last
// of which says how many more there are.
func skippedFiles(skipped []files.Skipped) []*executorv1.SkippedFile {
	listed := skipped[:min(len(skipped), maxSkippedListed)]
	out := make([]*executorv1.SkippedFile, len(listed))
	for i, s := range listed {
		out[i] = &executorv1.SkippedFile{Path: s.Path, Reason: s.Reason}
	}
	if more := len(skipped) - len(listed); more > 0 {
		last := out[len(out)-1]
		last.Reason += fmt.Sprintf("; and %d more files the call named were left out, not listed: name fewer "+
			"files at once", more)
	}
	return out
}

// noteSkipped lists, in the reply's metadata, the files the call named that
// it went on without.
func noteSkipped(out *reply.Reply, skipped []*executorv1.SkippedFile) {
	for _, s := range skipped {
		out.Metadata.FilesSkipped = append(out.Metadata.FilesSkipped,
			reply.SkippedFile{Path: s.GetPath(), Reason: s.GetReason()})
	}
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
