package archive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// entry is one tar entry for building test archives; body is written as the
// entry's data and sets Size unless the header already has one.
type entry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644}, body: body}
}

func dir(name string) entry {
	return entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

// tarBytes writes entries as an uncompressed tar, exactly as given: no
// validation beyond what archive/tar's writer does.
func tarBytes(tb testing.TB, entries ...entry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := e.hdr
		if hdr.Size == 0 && hdr.Typeflag == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(&hdr); err != nil {
			tb.Fatalf("writing header %q: %v", hdr.Name, err)
		}
		if e.body != "" {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				tb.Fatalf("writing body of %q: %v", hdr.Name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func tgz(tb testing.TB, entries ...entry) []byte {
	tb.Helper()
	return gzipBytes(tb, tarBytes(tb, entries...))
}

// zeroBomb returns a valid gzip stream of prefix followed by mib MiB of
// zeros and then suffix (at most 64 KiB, written uncompressed), without
// compressing a gibibyte in the test: deflate encodes every MiB of zeros
// after the first few identically once the window is all zeros, so the
// encoding of one such MiB is repeated. The gzip trailer carries the true
// CRC and length, so the stream is valid to the last byte.
func zeroBomb(tb testing.TB, prefix []byte, mib int, suffix []byte) []byte {
	tb.Helper()
	const chunkSize = 1 << 20
	const primed = 3 // chunks written before one is repeated verbatim
	if mib < primed+1 || len(suffix) > 0xffff {
		tb.Fatalf("zeroBomb(%d MiB, %d suffix bytes): unsupported", mib, len(suffix))
	}
	chunk := make([]byte, chunkSize)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		tb.Fatal(err)
	}
	writeChunk := func(p []byte) int {
		if _, err := zw.Write(p); err != nil {
			tb.Fatal(err)
		}
		if err := zw.Flush(); err != nil { // byte-aligns the deflate stream
			tb.Fatal(err)
		}
		return buf.Len()
	}
	writeChunk(prefix)
	var start int
	for range primed {
		start = writeChunk(chunk)
	}
	end := writeChunk(chunk)
	repeat := bytes.Clone(buf.Bytes()[start:end])
	if again := writeChunk(chunk); !bytes.Equal(buf.Bytes()[end:again], repeat) {
		tb.Fatal("deflate did not encode consecutive zero chunks identically; zeroBomb needs another approach")
	}

	out := bytes.Clone(buf.Bytes()[:end]) // header, prefix and primed+1 chunks
	for range mib - primed - 1 {
		out = append(out, repeat...)
	}
	// Final stored block holding suffix: BFINAL=1, BTYPE=00, LEN, NLEN.
	out = append(out, 0x01)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(suffix)))
	out = binary.LittleEndian.AppendUint16(out, ^uint16(len(suffix)))
	out = append(out, suffix...)

	crc := crc32.Update(0, crc32.IEEETable, prefix)
	for range mib {
		crc = crc32.Update(crc, crc32.IEEETable, chunk)
	}
	crc = crc32.Update(crc, crc32.IEEETable, suffix)
	size := uint64(len(prefix)) + uint64(mib)*chunkSize + uint64(len(suffix))
	out = binary.LittleEndian.AppendUint32(out, crc)
	out = binary.LittleEndian.AppendUint32(out, uint32(size)) // ISIZE: the size modulo 2^32
	return out
}
