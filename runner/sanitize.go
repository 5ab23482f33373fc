package runner

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Sanitize makes files downloaded from a sandbox safe to hand to later CI
// steps: it removes every symbolic link (a link can point anywhere on the
// runner, and the agent chose it) and every .git/hooks directory (hooks run
// on the next git command outside the sandbox), and clears setuid, setgid,
// sticky and world-write bits. It returns what it removed, relative to root.
func Sanitize(root string) ([]string, error) {
	var removed []string
	info, err := os.Lstat(root)
	if err != nil {
		return nil, fmt.Errorf("sanitizing %s: %w", root, err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		if err := os.Remove(root); err != nil {
			return nil, fmt.Errorf("sanitizing %s: %w", root, err)
		}
		return []string{"."}, nil
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			if err := os.Remove(p); err != nil {
				return err
			}
			removed = append(removed, rel)
		case d.IsDir() && d.Name() == "hooks" && filepath.Base(filepath.Dir(p)) == ".git":
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			removed = append(removed, rel)
			return filepath.SkipDir
		case !d.IsDir() && !d.Type().IsRegular():
			// Devices, pipes and sockets have no business in an output.
			if err := os.Remove(p); err != nil {
				return err
			}
			removed = append(removed, rel)
		default:
			// No setuid, setgid or sticky bits, no world-writable files.
			info, err := d.Info()
			if err != nil {
				return err
			}
			mode := info.Mode()
			if mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || mode.Perm()&0o002 != 0 {
				if err := os.Chmod(p, mode.Perm()&^0o002); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("sanitizing %s: %w", root, err)
	}
	return removed, nil
}
