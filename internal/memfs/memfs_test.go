package memfs

import (
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"
)

func TestFileInfo(t *testing.T) {
	f, d := File("pacto.yaml", 42), Dir("openapi")
	if f.Name() != "pacto.yaml" || f.Size() != 42 || f.IsDir() || f.Mode() != 0o644 || f.Mode().Type() != 0 {
		t.Errorf("File = %s %d %v %v", f.Name(), f.Size(), f.IsDir(), f.Mode())
	}
	if d.Name() != "openapi" || !d.IsDir() || d.Mode() != fs.ModeDir|0o755 {
		t.Errorf("Dir = %s %v %v", d.Name(), d.IsDir(), d.Mode())
	}
	if !f.ModTime().Equal(time.Time{}) || f.Sys() != nil {
		t.Errorf("ModTime %v, Sys %v: want zero and nil", f.ModTime(), f.Sys())
	}
	if got := fs.FormatFileInfo(d); got != "drwxr-xr-x 0 0001-01-01 00:00:00 openapi/" {
		t.Errorf("FormatFileInfo(Dir) = %q", got)
	}
}

func TestOpenDir(t *testing.T) {
	entries := []fs.DirEntry{
		fs.FileInfoToDirEntry(File("a", 1)), fs.FileInfoToDirEntry(Dir("b")), fs.FileInfoToDirEntry(File("c", 3)),
	}
	d := NewOpenDir(Dir("x"), entries)
	if _, err := d.Read(make([]byte, 1)); !errors.Is(err, ErrIsDir) {
		t.Errorf("Read = %v, want ErrIsDir", err)
	}
	got, err := d.ReadDir(2)
	if err != nil || len(got) != 2 || got[0].Name() != "a" || got[1].Name() != "b" || !got[1].IsDir() {
		t.Fatalf("ReadDir(2) = %v, %v", got, err)
	}
	got[0] = nil // the caller's slice: the listing must not change
	rest, err := d.ReadDir(0)
	if err != nil || len(rest) != 1 || rest[0].Name() != "c" {
		t.Fatalf("ReadDir(0) = %v, %v", rest, err)
	}
	if more, err := d.ReadDir(1); len(more) != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("ReadDir(1) at the end = %v, %v; want io.EOF", more, err)
	}
	if entries[0] == nil {
		t.Error("ReadDir handed out the listing itself")
	}
}
