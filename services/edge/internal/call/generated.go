package call

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zenmcp/zen/services/edge/internal/files"
)

// GeneratedCodeFile is where chat's generated code lands, in the working
// directory.
const GeneratedCodeFile = "zen_generated.code"

// saveGeneratedCode writes the model's code block beside the project, so
// the agent applies it with care instead of pasting it from the answer,
// and tells the agent where it is. When the file cannot be written, the
// code goes back into the answer rather than being lost.
func saveGeneratedCode(payload, args map[string]any, code string) {
	content, _ := payload["content"].(string)
	wd, _ := args["working_directory_absolute_path"].(string)
	path := filepath.Join(files.ExpandHome(wd), GeneratedCodeFile)
	err := fmt.Errorf("no working directory was given")
	if wd != "" {
		err = os.WriteFile(path, []byte(code+"\n"), 0o644)
	}
	if err != nil {
		payload["content"] = content + fmt.Sprintf("\n\nzen could not save the generated code to %s (%v); here it is:\n\n%s", GeneratedCodeFile, err, code)
		return
	}
	payload["content"] = content + fmt.Sprintf("\n\nGENERATED CODE: the model wrote code for this task to %s. Read that file, "+
		"check each change against the codebase and apply it carefully with your own edit tools (do not paste it "+
		"blindly), then delete the file.", path)
	if meta, ok := payload["metadata"].(map[string]any); ok {
		meta["generated_code_file"] = path
	}
}
