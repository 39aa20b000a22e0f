package call

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
)

// imageSet is what a call's images were read into.
type imageSet struct {
	urls, refs []string // the images as data URLs, and the refs each was read from
	bytes      int64
	skipped    []files.Skipped // gone since they were named
}

// readImages checks the model takes images, the count and the total size,
// and reads them.
func (r *Runner) readImages(tool string, model *routerv1.Model, refs []string) (imageSet, *Outcome) {
	refuse := func(msg string) (imageSet, *Outcome) {
		return imageSet{}, ptr(toolError(tool, msg, map[string]any{"error_type": "validation_error"}))
	}
	// Tools that pick their models later (consensus) leave the model check
	// to the router, per model.
	if model != nil && !model.GetSupportsImages() {
		return refuse(fmt.Sprintf("Image support not available: model '%s' does not support images. Pick a "+
			"model that does (see listmodels), or call again without images.", model.GetName()))
	}
	if len(refs) > files.MaxImages {
		return refuse(fmt.Sprintf("Too many images: %d given, at most %d per call.", len(refs), files.MaxImages))
	}
	var set imageSet
	for _, ref := range refs {
		img, err := r.files.ReadImage(ref)
		if s := (*files.Skipped)(nil); errors.As(err, &s) {
			set.skipped = append(set.skipped, *s)
			continue
		}
		if err != nil {
			return refuse("Error: " + err.Error())
		}
		set.bytes += img.Size
		set.urls, set.refs = append(set.urls, img.URL), append(set.refs, ref)
	}
	if limit := model.GetMaxImageSizeMb(); limit > 0 && float64(set.bytes) > limit*1024*1024 {
		return refuse(fmt.Sprintf("Images too large: %.1f MB in total, %s accepts %.0f MB.",
			float64(set.bytes)/(1024*1024), model.GetName(), limit))
	}
	return set, nil
}

// addEarlierImages adds to a workflow's final step the images of its
// tool's earlier turns in the thread (earlier, newest first; the executor
// keeps those of the workflow's own steps), as the reference sends its
// expert every step's: after the step's own (weighing already bytes),
// while they fit the count and the model's size limit. One that can no
// longer be read is left out, saying so: the step is not failed for a
// file an earlier one named.
func (r *Runner) addEarlierImages(req *executorv1.ExecuteToolRequest, earlier []string, already int64) {
	model := req.GetModel()
	if model == nil || !model.GetSupportsImages() {
		return
	}
	limit := int64(model.GetMaxImageSizeMb() * 1024 * 1024)
	for _, ref := range earlier {
		if len(req.GetImages()) >= files.MaxImages {
			return
		}
		if slices.Contains(req.GetImageRefs(), ref) {
			continue
		}
		img, err := r.files.ReadImage(ref)
		if err != nil {
			label := ref
			if strings.HasPrefix(ref, "data:") {
				label = "an image an earlier step sent as a data URL"
			}
			req.SkippedFiles = append(req.SkippedFiles, &executorv1.SkippedFile{Path: label,
				Reason: "an earlier step's image that can no longer be read: " + err.Error()})
			continue
		}
		if limit > 0 && already+img.Size > limit {
			continue
		}
		already += img.Size
		req.Images, req.ImageRefs = append(req.Images, img.URL), append(req.ImageRefs, ref)
	}
}
