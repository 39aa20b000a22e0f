package files

import (
	"strings"
	"testing"
)

// A data URL's payload must be base64: a provider that cannot decode it
// answers a 400 that some quote back, with whatever the client wrote.
func TestADataURLMustHoldBase64(t *testing.T) {
	t.Parallel()
	var pol Policy
	for ref, want := range map[string]string{
		"data:image/png;base64,iVBORw0KGgo=":                           "",
		"data:image/png;base64,API key not valid, the model not found": "not base64",
		"data:image/png;base64,QUFBQQ":                                 "", // unpadded, as some clients send
		"data:image/png;base64,QUFB!!==":                               "not base64",
		"data:text/plain;base64,QUFBQQ==":                              "unsupported image data URL",
	} {
		_, err := pol.ReadImage(ref)
		switch {
		case want == "" && err != nil:
			t.Errorf("ReadImage(%.40s): %v, want it read", ref, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ReadImage(%.40s): %v, want an error saying %q", ref, err, want)
		}
	}
}
