package call

import (
	"errors"
	"fmt"

	"github.com/zenmcp/zen/services/platform/reply"
)

// GeneratedCodeFile is where chat's generated code lands, in the working
// directory.
const GeneratedCodeFile = "zen_generated.code"

// applyWithCare is what the agent is asked to do with generated code.
const applyWithCare = "check each change against the codebase and apply it carefully with your own edit tools " +
	"(do not paste it blindly)"

// saveGeneratedCode writes the model's code block beside the project, so
// the agent applies it with care instead of pasting it from the answer,
// and tells the agent where it is. The write follows the file policy (the
// working directory inside the roots, never through a link). A shared
// server writes nothing: the client's directory is not on its disk. Either
// way, code that is not written goes back in the answer rather than being
// lost.
func (r *Runner) saveGeneratedCode(out *reply.Reply, args map[string]any, code string) {
	content := out.Content
	wd, _ := args["working_directory_absolute_path"].(string)
	if !r.files.Writes() {
		out.Content = content + fmt.Sprintf("\n\nGENERATED CODE: this zen is a shared server (%s) and writes "+
			"nothing to its disk, so the code is here. Save it as %s in your working directory if you like, then %s."+
			"\n\n%s", r.files.Shared(), GeneratedCodeFile, applyWithCare, code)
		return
	}
	path, err := "", errors.New("no working directory was given")
	if wd != "" {
		path, err = r.files.WriteFile(wd, GeneratedCodeFile, []byte(code+"\n"))
	}
	if err != nil {
		out.Content = content + fmt.Sprintf("\n\nzen could not save the generated code to %s (%v); here it is:\n\n%s",
			GeneratedCodeFile, err, code)
		return
	}
	out.Content = content + fmt.Sprintf("\n\nGENERATED CODE: the model wrote code for this task to %s. Read that "+
		"file, %s, then delete the file.", path, applyWithCare)
	out.Metadata.GeneratedCodeFile = path
}
