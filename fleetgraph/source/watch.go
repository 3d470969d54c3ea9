package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kubepact/kubepact/bundle/contract"
)

// Watch defaults.
const (
	DefaultWatchDebounce = 250 * time.Millisecond
	// maxWatchedDirs bounds the directories one Watch asks the kernel to
	// watch (inotify watches are a per-user resource).
	maxWatchedDirs = 4096
)

// WatchOptions configure Watch; nil or zero fields mean defaults.
type WatchOptions struct {
	// Debounce is how long Watch waits after a change for more before it
	// re-reads (default 250ms): an editor's save or a bundle written file
	// by file is one re-read.
	Debounce time.Duration
	// OnCollect, when set, is called after every re-read with the
	// published snapshot's id (for logs).
	OnCollect func(snapshotID string)
}

// Watchable is a source whose content lives in files Watch can observe.
type Watchable interface {
	Source
	// WatchDirs returns the directories to watch now.
	WatchDirs() []string
	// Concerns reports whether a change to path (as the watch reports it:
	// below one of WatchDirs) concerns the source.
	Concerns(path string) bool
}

// Watch keeps the feed's watchable sources (local directories and
// target-state files) live until ctx is done: it watches their
// directories, waits Debounce after a change, then re-collects the
// sources the changes concern, which flow to the Builder as upserts and
// deletes. It returns nil when ctx is done, or an error when no watch
// could be set up at all; directories that cannot be watched (or beyond
// the bound) are left out.
func (f *Feed) Watch(ctx context.Context, opts *WatchOptions) error {
	o := WatchOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultWatchDebounce
	}
	var ws []Watchable
	for _, s := range f.sources {
		if w, ok := s.(Watchable); ok {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		<-ctx.Done()
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	watched := map[string]bool{}
	// sync watches the directories the sources name now and reports
	// whether it added any. A directory is watched only after it exists,
	// so what was written into it before the watch was added (a bundle
	// created file by file) sends no event: whenever sync adds one, the
	// sources are read again, once more.
	sync := func() (added bool) {
		for _, s := range ws {
			for _, d := range s.WatchDirs() {
				if len(watched) >= maxWatchedDirs {
					return added
				}
				if !watched[d] && w.Add(d) == nil {
					watched[d], added = true, true
				}
			}
		}
		return added
	}
	dirty := map[Source]bool{}
	var timer <-chan time.Time
	rereadAll := func() {
		for _, s := range ws {
			dirty[s] = true
		}
		timer = time.After(o.Debounce)
	}
	// The sources were read before the watch began: read them once more,
	// so a change made in between is not lost.
	sync()
	rereadAll()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				delete(watched, ev.Name) // the kernel dropped it, if it was one
			}
			hit := false
			for _, s := range ws {
				if s.Concerns(ev.Name) {
					dirty[s], hit = true, true
				}
			}
			if hit {
				timer = time.After(o.Debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflowed queue lost events: re-read everything.
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				rereadAll()
			}
		case <-timer:
			timer = nil
			pick := dirty
			dirty = map[Source]bool{}
			snap := f.Collect(ctx, func(s Source) bool { return pick[s] })
			if sync() { // new directories (a bundle just created) are watched too
				rereadAll()
			}
			if o.OnCollect != nil {
				o.OnCollect(snap.ID())
			}
		}
	}
}

// WatchDirs implements Watchable: every directory the scan visits, and
// the directories inside the bundles it finds (a bundle's interfaces/ and
// policies/ change too).
func (l *LocalSource) WatchDirs() []string {
	root := filepath.Clean(l.Dir)
	depth := l.MaxDepth
	if depth <= 0 {
		depth = DefaultScanDepth
	}
	var dirs []string
	var walk func(dir string, d int)
	walk = func(dir string, d int) {
		if len(dirs) >= maxWatchedDirs {
			return
		}
		dirs = append(dirs, dir)
		if d >= depth+4 {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules" {
				continue
			}
			walk(filepath.Join(dir, name), d+1)
		}
	}
	walk(root, 0)
	return dirs
}

// Concerns implements Watchable: any path below the directory but hidden
// ones (an atomic writer's temporary file is followed by the rename that
// matters).
func (l *LocalSource) Concerns(p string) bool {
	root := filepath.Clean(l.Dir)
	p = filepath.Clean(p)
	if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return false
	}
	base := filepath.Base(p)
	return base == contract.FileName || !strings.HasPrefix(base, ".")
}

// WatchDirs implements Watchable: the file's directory (editors and
// atomic writers replace a file by renaming over it).
func (t *TargetStateSource) WatchDirs() []string {
	return []string{filepath.Dir(filepath.Clean(t.Path))}
}

// Concerns implements Watchable: the file itself.
func (t *TargetStateSource) Concerns(p string) bool {
	return filepath.Clean(p) == filepath.Clean(t.Path)
}
