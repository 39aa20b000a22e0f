package redisstore

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// compressAbove is the turn size from which compression pays off.
const compressAbove = 1024

var gzipMagic = []byte{0x1f, 0x8b}

// pack gzips data when compression is on and data is large enough to gain.
func (s *Store) pack(data []byte) (string, error) {
	if !s.compress || len(data) < compressAbove {
		return string(data), nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return "", fmt.Errorf("compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("compress: %w", err)
	}
	return buf.String(), nil
}

// unpack reads data written with or without compression, so the setting
// can change without losing threads. JSON never starts with gzip's magic.
func unpack(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, gzipMagic) {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return io.ReadAll(zr)
}

func decodeTurn(raw string) (memory.Turn, error) {
	data, err := unpack([]byte(raw))
	if err != nil {
		return memory.Turn{}, fmt.Errorf("turn: %w", err)
	}
	var t memory.Turn
	if err := json.Unmarshal(data, &t); err != nil {
		return memory.Turn{}, fmt.Errorf("decode turn: %w", err)
	}
	return t, nil
}
