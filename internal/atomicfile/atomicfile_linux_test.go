package atomicfile

import (
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFailsMidWrite: a write the kernel refuses part-way (the file
// size limit, EFBIG) leaves the old file whole and no temporary file.
func TestWriteFailsMidWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "layer.tar.gz")
	old := []byte("the old layer")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	// Over the limit the kernel sends SIGXFSZ, whose default ends the
	// process; ignored, the write returns EFBIG instead.
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	limit := syscall.Rlimit{Cur: 4096, Max: was.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Skipf("cannot lower the file size limit here: %v", err)
	}
	err := Write(path, make([]byte, 64<<10), 0o644)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &was); rerr != nil {
		t.Fatalf("restoring the file size limit: %v", rerr)
	}
	if err == nil {
		t.Fatal("a write over the file size limit succeeded")
	}
	got, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if string(got) != string(old) {
		t.Errorf("old file = %q, want %q", got, old)
	}
	assertOnly(t, dir, "layer.tar.gz")
}
