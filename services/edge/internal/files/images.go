package files

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxImages is the most images one call may carry.
const MaxImages = 5

// MaxImageBytes bounds one image file: no provider takes more, and a FIFO
// or a device named x.png must not hang or flood a call.
const MaxImageBytes = 20 << 20

// imageTypes maps accepted extensions to their media types.
var imageTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

// Image is an image ready to send: a data URL and its decoded size.
type Image struct {
	URL  string
	Size int64
}

// ReadImage accepts an absolute path to a PNG, JPEG, GIF or WebP file, or a
// data:image/...;base64 URL of one of those types.
func (pol Policy) ReadImage(ref string) (Image, error) {
	if strings.HasPrefix(ref, "data:") {
		meta, data, ok := strings.Cut(strings.TrimPrefix(ref, "data:"), ",")
		mime, enc, _ := strings.Cut(meta, ";")
		if !ok || enc != "base64" || !knownMime(mime) {
			return Image{}, fmt.Errorf("unsupported image data URL: want data:image/<png, jpeg, gif or webp>;base64 followed by the data")
		}
		if !isBase64(data) {
			// A provider that cannot decode it answers a 400, and some quote
			// what they could not decode: the client's words in zen's logs
			// and in the reason a model would rest (the router's breaker).
			return Image{}, fmt.Errorf("the image's data URL is not base64 after \"base64,\": encode the " +
				"image's bytes in base64")
		}
		return Image{URL: ref, Size: int64(base64.StdEncoding.DecodedLen(len(data)))}, nil
	}
	p, err := pol.Resolve(ref)
	if err != nil {
		return Image{}, err
	}
	mime, ok := imageTypes[strings.ToLower(filepath.Ext(p))]
	if !ok {
		return Image{}, fmt.Errorf("unsupported image %s: zen sends PNG, JPEG, GIF and WebP images", ref)
	}
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		// Gone since the agent named it (a stale screenshot): the call goes
		// on without it, as the reference's providers went on.
		return Image{}, &Skipped{Path: ref, Reason: "not found"}
	}
	if err != nil {
		return Image{}, fmt.Errorf("cannot read image %s: %w", ref, err)
	}
	if !info.Mode().IsRegular() || info.Size() > MaxImageBytes {
		return Image{}, notASmallImage(ref)
	}
	checkedHook(p)
	f, _, err := pol.openChecked(ref, p, MaxImageBytes)
	if err != nil {
		return Image{}, imageFailure(ref, err)
	}
	defer f.Close()
	raw, err := readAtMost(f, ref, MaxImageBytes)
	if err != nil {
		return Image{}, imageFailure(ref, err)
	}
	if holdsPrivateKey(raw) {
		return Image{}, fmt.Errorf("image %s holds a private key, which zen never sends to a model", ref)
	}
	return Image{URL: "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(raw), Size: int64(len(raw))}, nil
}

// notASmallImage refuses an image that is not a regular file within
// MaxImageBytes.
func notASmallImage(ref string) error {
	return fmt.Errorf("image %s is not a regular file of at most %d MB; pass a smaller image", ref, MaxImageBytes>>20)
}

// imageFailure is why the image at ref, which passed its checks, was not
// read: it changed since (openChecked, readAtMost say how), or is one of
// zen's own files.
func imageFailure(ref string, err error) error {
	if s, ok := asSkipped(err); ok {
		return fmt.Errorf("cannot read image %s: %s", ref, s.Reason)
	}
	return err
}

func knownMime(m string) bool {
	for _, v := range imageTypes {
		if v == m {
			return true
		}
	}
	return m == "image/jpg"
}

// isBase64 reports whether s is base64, padded or not, decoding it a piece
// at a time.
func isBase64(s string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if _, err := io.Copy(io.Discard, base64.NewDecoder(enc, strings.NewReader(s))); err == nil {
			return true
		}
	}
	return false
}
