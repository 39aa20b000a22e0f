package gateway

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// maxImportBytes bounds an import body.
const maxImportBytes = serve.MaxMessageBytes

// maxImportThreads bounds the threads of one import. Memory writes an
// import whole, in one transaction under SQLite, while every other write
// waits: 800,000 empty threads in one held every client's calls for
// twenty seconds. A larger export goes in as several imports. Memory
// refuses more too (memory.MaxImportThreads, with its bounds on turns and
// files); the gateway stops reading at the first thread past it.
const maxImportThreads = 1000

// importReadTime bounds how long an import's body may take to arrive:
// 64 MiB at half a megabyte a second.
const importReadTime = 2 * time.Minute

// What to do with an import past a bound, and what came of it.
const (
	nothingImported = "nothing was imported"
	splitAdvice     = "split the file and import each part; " + nothingImported
)

// Imports run one a client at a time, and maxImports in all, as each
// holds its decoded threads until memory has them. One a client, not one
// for everyone: a client that sends slowly, or one slow import after
// another, keeps itself waiting and one slot only.
const maxImports = 4

func newImportSlots() *requestSlots {
	return &requestSlots{what: "import", whats: "imports", oneEach: true, total: maxImports}
}

// importThreads reads threads, one per line, and stores them all or none
// (POST /v1/threads:import, ?replace=true to overwrite).
func (p threadPaths) importThreads(w http.ResponseWriter, r *http.Request) {
	replace, err := strconv.ParseBool(defaultString(r.URL.Query().Get("replace"), "false"))
	if err != nil {
		writeStatus(w, status.Error(codes.InvalidArgument, "replace must be true or false"))
		return
	}
	if r.ContentLength > maxImportBytes { // refused before a byte of it is asked for
		refuseLargeBody(w, r, maxImportBytes, splitAdvice)
		return
	}
	release, refused := p.imports.take(auth.Client(r.Context()))
	if release == nil {
		refused(w, nothingImported)
		return
	}
	defer release()
	// A slot is not held for long by a client that sends slowly.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(p.importTime))
	req, err := readThreads(http.MaxBytesReader(w, r.Body, maxImportBytes))
	var cut *readFailure
	switch {
	case errors.As(err, &cut):
		refuseUnreadBody(w, r, cut.err, p.importTime, splitAdvice, nothingImported)
		return
	case err != nil:
		writeStatus(w, err)
		return
	}
	req.Replace = replace
	resp, err := p.memory.ImportThreads(r.Context(), req)
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, http.StatusOK, importResult{Imported: resp.GetImported()})
}

// readThreads decodes body's threads as they arrive, so that a bound
// crossed is told at once and the body is not held beside the threads.
// A body that could not be read whole is a *readFailure, whatever the line
// it cut short looked like.
func readThreads(body io.Reader) (*memoryv1.ImportThreadsRequest, error) {
	in := &failureMemo{r: body}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportBytes)
	req := &memoryv1.ImportThreadsRequest{}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if len(req.Threads) == maxImportThreads {
			return nil, status.Errorf(codes.InvalidArgument, "an import holds at most %d threads: %s",
				maxImportThreads, splitAdvice)
		}
		t := &memoryv1.Thread{}
		if err := protojson.Unmarshal(line, t); err != nil {
			if in.err != nil {
				break // the line was cut short where the body was
			}
			return nil, status.Errorf(codes.InvalidArgument, "line %d is not a thread as GET /v1/threads:export "+
				"writes it: %v; %s", n, err, nothingImported)
		}
		req.Threads = append(req.Threads, t)
	}
	if err := cmp.Or(in.err, sc.Err()); err != nil {
		if errors.Is(err, bufio.ErrTooLong) { // one line as large as a whole body may be
			err = &http.MaxBytesError{Limit: maxImportBytes}
		}
		return nil, &readFailure{err}
	}
	return req, nil
}

// failureMemo keeps the error a read ended with, other than the body's
// end: the scanner hands over what it had read before it says why it
// stopped.
type failureMemo struct {
	r   io.Reader
	err error
}

func (m *failureMemo) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		m.err = err
	}
	return n, err
}

// readFailure is a body that could not be read whole.
type readFailure struct{ err error }

func (f *readFailure) Error() string { return "read the body: " + f.err.Error() }

// importResult is the answer of POST /v1/threads:import.
type importResult struct {
	Imported int32 `json:"imported"`
}
