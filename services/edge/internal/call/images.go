package call

import (
	"errors"
	"fmt"
	"os"
	"strings"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
)

// finalExpertStep reports whether a call is the final step, after others,
// of a workflow whose expert reads the files on the final step (not
// consensus, whose every step's model sees its own step's): it sends its
// expert the earlier steps' images too.
func finalExpertStep(tool *Tool, args map[string]any) bool {
	next, _ := args["next_step_required"].(bool)
	step, _ := args["step_number"].(float64)
	return tool.GetFilesOnFinalStep() && !next && step > 1
}

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
		set.urls, set.refs = append(set.urls, img.URL), append(set.refs, imageRef(ref))
	}
	if limit := model.GetMaxImageSizeMb(); limit > 0 && float64(set.bytes) > limit*1024*1024 {
		return refuse(fmt.Sprintf("Images too large: %.1f MB in total, %s accepts %.0f MB.",
			float64(set.bytes)/(1024*1024), model.GetName(), limit))
	}
	return set, nil
}

// imageRef is what ImageRefs holds for an image a call named as ref: the
// path, or "" for a data URL, which would double the message (the
// executor takes an unnamed image for the call's own).
func imageRef(ref string) string {
	if strings.HasPrefix(ref, "data:") {
		return ""
	}
	return ref
}

// addEarlierImages adds to a workflow's final step the images its earlier
// steps named (earlier: memory's tool_images, paths, newest first; the
// executor keeps those of the workflow's own steps), as the reference
// sends its expert every step's: after the step's own (weighing already
// bytes), while they fit the count and the model's size limit. One left
// out is listed, saying why: the step is not failed for a file an earlier
// one named, nor the expert thought to have seen it.
func (r *Runner) addEarlierImages(req *executorv1.ExecuteToolRequest, earlier []string, already int64) {
	model := req.GetModel()
	limit := int64(model.GetMaxImageSizeMb() * 1024 * 1024)
	leave := func(path, why string) {
		req.SkippedFiles = append(req.SkippedFiles, &executorv1.SkippedFile{Path: path,
			Reason: "an earlier step's image, left out: " + why})
	}
	// The files already taken, by where they are: one file named under
	// several spellings is read, and sent, once.
	taken := map[string]bool{}
	for _, ref := range req.GetImageRefs() {
		if p, err := r.files.Resolve(ref); err == nil && ref != "" {
			taken[p] = true
		}
	}
	pastLimit := func(size int64) bool { return limit > 0 && already+size > limit }
	for _, ref := range earlier {
		resolved, resolveErr := r.files.Resolve(ref)
		switch {
		case resolveErr == nil && taken[resolved]:
			continue
		case model == nil || !model.GetSupportsImages():
			leave(ref, fmt.Sprintf("%s takes no images", model.GetName()))
			continue
		case len(req.GetImages()) >= files.MaxImages:
			leave(ref, fmt.Sprintf("past the %d images a call sends", files.MaxImages))
			continue
		}
		// Weighed before it is read: one past the limit is never read.
		if info, err := os.Stat(resolved); resolveErr == nil && err == nil && pastLimit(info.Size()) {
			leave(ref, fmt.Sprintf("past the %.0f MB of images %s takes", model.GetMaxImageSizeMb(), model.GetName()))
			continue
		}
		img, err := r.files.ReadImage(ref)
		switch {
		case err != nil:
			leave(ref, "it can no longer be read: "+err.Error())
		case pastLimit(img.Size):
			leave(ref, fmt.Sprintf("past the %.0f MB of images %s takes", model.GetMaxImageSizeMb(), model.GetName()))
		default:
			already += img.Size
			taken[resolved] = true
			req.Images, req.ImageRefs = append(req.Images, img.URL), append(req.ImageRefs, ref)
		}
	}
}
