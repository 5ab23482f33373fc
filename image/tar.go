package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// File modes written into layers: every entry gets one of these, whatever
// the mode on the build machine, so umask and checkout settings cannot change
// the digest.
const (
	modeDir  = 0o755
	modeFile = 0o644
	modeExec = 0o755
)

// file is one entry of a layer, addressed by its absolute path inside the
// image. Its content is data, or the file at src on the build machine
// (read when the tar is written, so a large binary is streamed, not held).
type file struct {
	path string // absolute, cleaned, e.g. /opt/fullsend/policies/triage.yaml
	data []byte
	src  string
	size int64 // of src, from Stat when the layer was planned
	exec bool
	dir  bool // an explicit (possibly empty) directory; data is ignored
}

// tarPlan is a validated, sorted list of tar entries.
type tarPlan struct {
	names   []string         // sorted; directories end in "/"
	entries map[string]*file // nil for directories
	mtime   time.Time
}

// planTar validates files and lays out the tar's fixed shape: entries
// sorted by name, every parent directory explicit and before its children.
func planTar(files []file, mtime time.Time) (*tarPlan, error) {
	plan := &tarPlan{entries: map[string]*file{}, mtime: mtime.UTC().Truncate(time.Second)}
	for i := range files {
		if err := plan.add(&files[i]); err != nil {
			return nil, err
		}
	}
	for n := range plan.entries {
		plan.names = append(plan.names, n)
	}
	// Sorting the names puts "a/" before "a/b": parents precede children.
	sort.Strings(plan.names)
	return plan, nil
}

// add enters f (a file, or an explicit directory) and its parent
// directories; its path must be absolute and clean, and no path may be
// both a file and a directory or a file twice.
func (plan *tarPlan) add(f *file) error {
	entries := plan.entries
	p := path.Clean(f.path)
	if !path.IsAbs(f.path) || p != f.path || p == "/" {
		return fmt.Errorf("layer path %q must be absolute and clean", f.path)
	}
	name := strings.TrimPrefix(p, "/")
	if f.dir {
		if _, clash := entries[name]; clash {
			return fmt.Errorf("layer path %s is both a file and a directory", p)
		}
		name += "/"
		f = nil
	}
	if _, dup := entries[name]; dup && f != nil {
		return fmt.Errorf("layer path %s appears twice", p)
	}
	if _, isDir := entries[name+"/"]; isDir && f != nil {
		return fmt.Errorf("layer path %s is both a file and a directory", p)
	}
	entries[name] = f
	for dir := path.Dir(strings.TrimSuffix(name, "/")); dir != "."; dir = path.Dir(dir) {
		if _, clash := entries[dir]; clash {
			return fmt.Errorf("layer path /%s is both a file and a directory", dir)
		}
		entries[dir+"/"] = nil
	}
	return nil
}

// size is the exact length of the rendered tar, for buffer sizing.
func (p *tarPlan) sizeHint() int {
	n := 1024
	for _, f := range p.entries {
		n += 1536
		if f != nil {
			n += int(max(int64(len(f.data)), f.size)) + 512
		}
	}
	return n
}

// writeTo renders the plan as an uncompressed PAX tar: uid/gid 0, empty
// user and group names, fixed modes, one modification time, no access or
// change times. The same plan always gives the same bytes; a source file
// that changed size since planning is an error, never a silent variation.
func (p *tarPlan) writeTo(w io.Writer) error {
	tw := tar.NewWriter(w)
	for _, n := range p.names {
		hdr := &tar.Header{Name: n, ModTime: p.mtime, Format: tar.FormatPAX}
		f := p.entries[n]
		if f == nil {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, modeDir
		} else {
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, modeFile, int64(len(f.data))
			if f.src != "" {
				hdr.Size = f.size
			}
			if f.exec {
				hdr.Mode = modeExec
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("writing tar header %s: %w", n, err)
		}
		if f == nil {
			continue
		}
		if err := writeContent(tw, f); err != nil {
			return fmt.Errorf("writing tar entry %s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing tar: %w", err)
	}
	return nil
}

func writeContent(tw *tar.Writer, f *file) error {
	if f.src == "" {
		_, err := tw.Write(f.data)
		return err
	}
	src, err := os.Open(f.src)
	if err != nil {
		return err
	}
	defer src.Close()
	n, err := io.Copy(tw, io.LimitReader(src, f.size+1))
	if err != nil {
		return err
	}
	if n != f.size {
		return fmt.Errorf("%s changed size during the build (%d bytes, was %d)", f.src, n, f.size)
	}
	return nil
}

// deterministicTar renders files into memory (see planTar and writeTo).
func deterministicTar(files []file, mtime time.Time) ([]byte, error) {
	plan, err := planTar(files, mtime)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(plan.sizeHint())
	if err := plan.writeTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
